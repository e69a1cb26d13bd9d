"""Vocabulary randomization: the YAML schema, spec generation, translation both ways and the
canonical-name guard."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.randomizer import (
    CanonicalNameError,
    RandomizationSpec,
    Randomizer,
    RuntimeRandomizer,
    SpecGenerator,
    check_config,
    load_config,
    resolve_config_path,
)
from magma_core.simulation.tasks import PerfectTrace, ToolCallEvent, UserEvent
from magma_scenarios.sorting.definitions import LongSorting
from magma_scenarios.sorting.presets import SortAll

TASK = LongSorting().generate(0)
CONFIG = load_config(resolve_config_path(TASK, TASK.randomized_config_path))
CANONICAL_VALUES = ["red_cube", "green_cube", "blue_cube", "yellow_cube", "zone_a", "zone_b", "zone_c"]


def _runtime(seed: int) -> RuntimeRandomizer:
    return RuntimeRandomizer(SpecGenerator(seed).generate_random_spec(TASK, CONFIG))


def test_the_shipped_config_resolves_next_to_the_definition():
    path = resolve_config_path(TASK, "randomization.yaml")
    assert path.name == "randomization.yaml" and path.parent.name == "sorting" and path.exists()
    assert resolve_config_path(SortAll(), "randomization.yaml") == path


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "No tool randomization detected"),
        ({"tools": {"pick": {"name": ["1bad"]}}}, "identifiers"),
        ({"tools": {"pick": {"name": ["take"]}}, "colours": {}}, "unknown sections"),
        ({"tools": {"pick": {"name": ["take"]}},
          "semantic_attributes": {"c": {"variations": [["a"]], "forms": ["x"]}}}, "one {value}"),
        ({"tools": {"pick": {"name": ["take"]}}, "attributes": {"areas": [["ok", 3]]}}, "strings"),
    ],
)
def test_config_errors_name_the_rule(config, message):
    with pytest.raises(ValueError, match=message):
        check_config(config)


def test_generation_is_seeded_and_indexed_variations_are_deterministic():
    assert SpecGenerator(4).generate_random_spec(TASK, CONFIG) == SpecGenerator(4).generate_random_spec(TASK, CONFIG)
    specs = SpecGenerator().generate_N_spec(TASK, config=CONFIG)
    assert len(specs) == 4  # the longest list (pick's names)
    assert specs == SpecGenerator(99).generate_N_spec(TASK, config=CONFIG)
    assert [s.tools[0]["name"] for s in specs] == ["grasp", "take", "lift_object", "grab"]
    assert specs[0].attributes_equivalence["zone_a"] == "bin_north"
    assert specs[0].attributes_equivalence["red_cube"] == "crimson_cube"
    assert specs[0].attribute_keys_order == ["objects", "areas"]


def test_unconfigured_tools_keep_their_names_and_required_flags_survive():
    spec = SpecGenerator(1).generate_random_spec(TASK, {"tools": {"pick": {"name": ["take"]}}})
    names = {t["name"] for t in spec.tools}
    assert names == {"take", "place", "detect_objects", "add_area"}
    take = next(t for t in spec.tools if t["name"] == "take")
    assert take["parameters"]["object"]["required"] is True
    assert spec.attributes_equivalence == {}


def test_value_collisions_and_bad_public_values_are_refused():
    base = {"tools": {"pick": {"name": ["take"]}}}
    with pytest.raises(ValueError, match="another canonical value"):
        SpecGenerator(0).generate_random_spec(TASK, {**base, "attributes": {"areas": [["zone_b", "x", "y"]]}})
    with pytest.raises(ValueError, match="names both"):
        SpecGenerator(0).generate_random_spec(TASK, {**base, "attributes": {"areas": [["x", "x", "y"]]}})
    with pytest.raises(TypeError, match="variation has 2 values"):
        SpecGenerator(0).generate_random_spec(TASK, {**base, "attributes": {"areas": [["x", "y"]]}})
    with pytest.raises(ValueError, match="quotes"):
        RandomizationSpec(attributes_equivalence={"zone_a": 'zo"ne'})


def test_the_canonical_name_guard_gives_public_reasons():
    rt = RuntimeRandomizer(SpecGenerator().generate_N_spec(TASK, config=CONFIG)[0])
    assert rt.to_canonical_call("grasp", {"item": "crimson_cube"}) == ("pick", {"object": "red_cube"})
    with pytest.raises(CanonicalNameError, match=r"^`red_cube` was not detected\.$"):
        rt.to_canonical_call("grasp", {"item": "red_cube"})
    with pytest.raises(CanonicalNameError, match=r"^`red_cube, zone_a` were not detected\.$"):
        rt.to_canonical_call("grasp", {"item": ["zone_a", {"x": "red_cube"}]})
    with pytest.raises(CanonicalNameError, match=r"^`pick` is not a known tool\.$"):
        rt.to_canonical_call("pick", {"item": "crimson_cube"})
    with pytest.raises(CanonicalNameError, match="`object` are not valid arguments"):
        rt.to_canonical_call("grasp", {"object": "crimson_cube"})
    with pytest.raises(CanonicalNameError, match="must be a dict, got list"):
        rt.to_canonical_call("grasp", ["crimson_cube"])
    # values that are neither public nor canonical names pass through
    assert rt.to_canonical_call("grasp", {"item": "the moon"}) == ("pick", {"object": "the moon"})


def test_text_translation_matches_whole_names_only():
    spec = RandomizationSpec(attributes_equivalence={"red_cube": "ruby", "zone_a": "dock"})
    rt = RuntimeRandomizer(spec)
    assert rt.to_public_text("red_cube, red_cube_2 and big_red_cube in zone_a.") == \
        "ruby, red_cube_2 and big_red_cube in dock."
    assert rt.to_canonical_text("ruby in dock; rubyx stays") == "red_cube in zone_a; rubyx stays"


def test_status_lines_get_public_tool_and_parameter_names():
    rt = RuntimeRandomizer(SpecGenerator().generate_N_spec(TASK, config=CONFIG)[0])
    text = ("panda: pick failed with message: Missing arguments: object\n"
            "panda: place succeed with message: Placed the red_cube in zone_b.")
    assert rt.to_public_status(text) == (
        "panda: grasp failed with message: Missing arguments: item\n"
        "panda: put_down succeed with message: Placed the crimson_cube in bin_south.")


def test_attributes_are_translated_and_reordered_known_robots_untouched():
    rt = _runtime(5)
    shown = rt.get_randomized_attributes(
        {"known_robots": ["panda"], "areas": ["zone_a", "zone_b", "zone_c"],
         "objects": ["red_cube", "green_cube", "blue_cube", "yellow_cube"]})
    assert shown["known_robots"] == ["panda"]
    assert list(shown)[:2] == rt.spec.attribute_keys_order
    assert shown["areas"] == [v for v in rt.spec.attribute_values_order["areas"]]
    assert sorted(rt.to_canonical_text(v) for v in shown["objects"]) == sorted(
        ["red_cube", "green_cube", "blue_cube", "yellow_cube"])


def test_randomizer_holds_variations():
    with pytest.raises(ValueError):
        Randomizer(0)
    randomizer = Randomizer(3)
    with pytest.raises(RuntimeError):
        randomizer.get_tools()
    randomizer.initialize_randomizer(TASK)
    assert len(randomizer.variations) == 3
    randomizer.set_variation_index(2)
    assert randomizer.get_tools()[0]["name"] == "lift_object"
    with pytest.raises(RuntimeError):
        randomizer.set_variation_index(3)
    one = Randomizer(1, seed=8)
    one.initialize_randomizer(TASK)
    assert one.current.spec == SpecGenerator(8).generate_random_spec(TASK)


def test_a_public_trace_translates_calls_and_words():
    rt = RuntimeRandomizer(SpecGenerator().generate_N_spec(TASK, config=CONFIG)[1])
    trace = PerfectTrace([UserEvent("Put the red_cube in zone_a."),
                          ToolCallEvent([ToolCall("pick", {"object": "red_cube"}, "panda")])])
    public = rt.to_public_trace(trace).to_dict()["events"]
    assert public[0]["content"] == "Put the scarlet_cube in tray_left."
    assert public[1]["calls"][0] == {"name": "take", "arguments": {"target": "scarlet_cube"},
                                     "target_robot_name": "panda"}


# -- property: public <-> canonical round-trips over generated mappings ---------------------
TOOLS = {"pick": "object", "place": "area"}
WORDS = st.sampled_from(CANONICAL_VALUES + ["the", "cube", "then", "red", "zone", "_", " ", ".", ","])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), tool=st.sampled_from(sorted(TOOLS)),
       value=st.sampled_from(CANONICAL_VALUES + ["elsewhere", "7"]),
       words=st.lists(WORDS, max_size=12))
def test_translation_round_trips(seed, tool, value, words):
    rt = _runtime(seed)
    public_tool, public_args = rt.to_public_call(tool, {TOOLS[tool]: value})
    assert rt.to_canonical_call(public_tool, public_args) == (tool, {TOOLS[tool]: value})
    text = " ".join(words)
    assert rt.to_canonical_text(rt.to_public_text(text)) == text
    memory = {"notes": [text, {"last": value}]}
    assert rt.to_public_value(memory)["notes"][1]["last"] == rt.to_public_text(value)


# -- skills: the agent's skill list gets a public vocabulary too ---------------------------
def test_a_vocabulary_covers_the_skills_the_agent_sees():
    from magma_core.scenarios.episode_tasks import EpisodeTasks
    from magma_core.simulation.executor.skill_state import SkillAPI
    from magma_core.simulation.skills import agent_tools
    from magma_scenarios.sorting.skill_presets import SkillTwoArms
    from magma_scenarios.sorting.skills import ClearZone
    from magma_scenarios.sorting.skills import SortAll as SortAllSkill

    task = SkillTwoArms()
    plain = task.Tools_cls.get_api_description()
    engine_tools = SkillAPI(plain, task.skills).descriptions()
    assert agent_tools(plain, task.skills) == engine_tools  # one definition of the list
    rt = RuntimeRandomizer(SpecGenerator(3).generate_random_spec(task))
    assert [t["name"] for t in rt.get_tools()][:1] == ["cancel_current_action"]  # reserved
    assert len(rt.get_tools()) == len(engine_tools)
    name, arguments = rt.to_public_call("sort_all", {"color": "red, blue", "area": "zone_a"})
    assert name in {"sort_every", "gather_all", "collect_cubes"}
    colours = f"{rt.to_public_text('red')}, {rt.to_public_text('blue')}"  # inside one value
    assert sorted(arguments.values()) == sorted([colours, rt.to_public_text("zone_a")])
    assert "red" not in colours and "blue" not in colours
    assert rt.to_canonical_call(name, arguments) == ("sort_all", {"color": "red, blue", "area": "zone_a"})
    # a run's own skills (--skills) replace the preset's in the vocabulary
    tasks = EpisodeTasks(SortAll(), randomized=True, skills=[ClearZone])
    names = {e["name"] for e in tasks.randomization(SortAll(), 0).spec.tool_equivalence.values()}
    assert "clear_zone" in names and SortAllSkill.spec.name not in names


def test_robot_status_labels_get_public_skill_and_parameter_names():
    from magma_scenarios.sorting.skill_presets import SkillSortAll

    rt = RuntimeRandomizer(SpecGenerator().generate_N_spec(SkillSortAll(), config=CONFIG)[0])
    assert rt.to_public_status("RUNNING sort_all(color=red, blue, area=zone_c)") == \
        "RUNNING sort_every(colour=crimson, azure, region=bin_middle)"
    assert rt.to_public_status("pick(object=red_cube) was cancelled.") == \
        "grasp(item=crimson_cube) was cancelled."
    assert rt.to_public_status("look (here) and f(x=1)") == "look (here) and f(x=1)"
