"""User simulation: the built-in deterministic paraphraser, a model in the user role on a
loopback OpenAI-compatible server, and the bench condition ``paraphrase`` end to end."""

from __future__ import annotations

import json

import pytest

from magma_core.agents.user_simulation import ModelUser, RuleParaphraser, kept_words, user_from_spec
from magma_core.simulation.data_structures import TemplateInstruction
from magma_core.user_error import UserError

from .agent_helpers import completion

TEXT = "Sort the cubes: put the red_cube in zone_a, then the green_cube in zone_b."


def test_the_builtin_paraphraser_is_seeded_and_keeps_every_name():
    variants = {RuleParaphraser().paraphrase(TEXT, seed) for seed in range(12)}
    assert len(variants) >= 4
    for variant in variants:
        assert kept_words(variant) == ["red_cube", "zone_a", "green_cube", "zone_b"]
    user = RuleParaphraser()
    variant = user.paraphrase(TEXT, 3)
    assert variant == RuleParaphraser().paraphrase(TEXT, 3)  # seeded
    assert user.variants == [{"original": TEXT, "seed": 3, "variant": variant, "user": "builtin"}]


def test_a_template_instruction_is_filled_in():
    instruction = TemplateInstruction({"object": "red_cube", "area": "zone_b"}, "sorting")
    words = user_from_spec("builtin").fill_template(instruction.template, instruction.context, 0)
    instruction.set_content(words)
    assert "red_cube" in instruction.content and "zone_b" in instruction.content
    assert instruction.content != str(instruction.template)


def test_a_model_in_the_user_role_is_seeded_and_checked(fake_openai):
    fake_openai.script = [completion("Could you first move red_cube to zone_a, then green_cube to zone_b?"),
                          completion("Move the red one to the first zone."),  # drops the names
                          completion("Please move red_cube into zone_b.")]
    user = ModelUser(f"openai:user-model@{fake_openai.base_url}", retries=0)
    assert user.paraphrase(TEXT, 7).startswith("Could you first move red_cube")
    sent = fake_openai.requests[0]
    assert sent["seed"] == 7 and sent["model"] == "user-model" and sent["messages"][1]["content"] == TEXT
    assert user.paraphrase(TEXT, 8) == TEXT  # a reply that loses a name is refused
    filled = user.fill_template({"object": "red_cube", "area": "zone_b"}, "sorting", 1)
    assert filled == "Please move red_cube into zone_b."
    assert [v["seed"] for v in user.variants] == [7, 8, 1]
    fake_openai.script = [(500, {"error": "down"})]
    with pytest.raises(UserError, match="did not answer"):
        user.paraphrase(TEXT, 9)
    with pytest.raises(UserError):
        user_from_spec("trace")


@pytest.mark.sim
def test_the_paraphrase_condition_compiles_and_the_trace_agent_still_succeeds(tmp_path):
    from magma_core.bench.report import bench_report
    from magma_core.bench.runner import BenchSpec, run_bench
    from magma_core.bench.suite import compile_suite, load_suite

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: para\ntransforms: magma_scenarios.sorting.bench_conditions\n"
                    "conditions: [clean, paraphrase]\nskeletons:\n  - {preset: sorting.SortAll, track: in_domain}\n")
    compile_suite(spec, tmp_path / "suite")
    items = {i["condition"]: i for i in load_suite(tmp_path / "suite").items}
    clean, para = items["clean"], items["paraphrase"]
    intervention, = para["interventions"]
    assert intervention["type"] == "paraphrase" and intervention["user"] == "builtin"
    first = para["task"]["stages"][0]["spec"]["arguments"]["instruction"]
    assert first == intervention["variant"] != clean["task"]["stages"][0]["spec"]["arguments"]["instruction"]
    assert para["task"]["perfect_trace"]["events"][0]["content"] == first
    compile_suite(spec, tmp_path / "again")  # seeded: the same words again
    again = {i["condition"]: i for i in load_suite(tmp_path / "again").items}["paraphrase"]
    assert json.dumps(again["task"], sort_keys=True) == json.dumps(para["task"], sort_keys=True)
    run_bench(BenchSpec(tmp_path / "suite", agent="trace", out=tmp_path / "runs", name="p"))
    report = bench_report(tmp_path / "runs", ["p"])["p"]
    assert report["success_by_condition"]["paraphrase"]["num"] == 1


@pytest.mark.sim
def test_magma_run_with_a_simulated_user_stores_each_episodes_words(tmp_path):
    from cli.conftest import magma
    from magma_core.store.reader import StoreReader

    done = magma("run", "sorting.SortAll", "--agent", "trace", "--user", "builtin", "--episodes", "2",
                 "--out", "st", "--name", "u", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2/2 episodes succeeded" in done.stdout and "perfect trace" not in done.stderr
    store = StoreReader(tmp_path / "st", tmp_path / "st" / "magma.db")
    assert store.get_run("u")["config"]["user"] == "builtin"
    words = []
    for episode in (0, 1):
        record = store.episode_record("u", episode)
        words.append(record["steps"][0]["inputs"][0]["content"])
        expected = RuleParaphraser().paraphrase(
            "Sort the cubes: put the red cube in zone_a, then the green cube in zone_b, then the blue cube in zone_c.",
            int(record["seed"]) * 1000)
        assert words[-1] == expected
    assert words[0] != words[1]


@pytest.mark.sim
def test_magma_gen_with_a_simulated_user_stores_each_trees_words(tmp_path):
    from cli.conftest import magma
    from magma_core.store.reader import StoreReader

    done = magma("gen", "sorting.SortAll", "--user", "builtin", "--max-nodes", "4", "--trees", "2",
                 "--slots", "1", "--out", "st", "--name", "g", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    store = StoreReader(tmp_path / "st", tmp_path / "st" / "magma.db")
    assert store.get_generation("g")["config"]["user"] == "builtin"
    roots = {s.tree: s.agent_input["instruction"]["content"] for s in store.situations("g") if s.parent is None}
    text = "Sort the cubes: put the red cube in zone_a, then the green cube in zone_b, then the blue cube in zone_c."
    assert roots == {t: RuleParaphraser().paraphrase(text, t * 1000) for t in (0, 1)}
