"""The built-in paraphraser says each kind of sentence as a person would (a frame for an
imperative clause, a lead-in for a question, statements kept), and the bench's paraphrase
condition takes stages whose words their constructor makes (not a spec argument)."""

from __future__ import annotations

import re

import pytest

from magma_core.agents.user_simulation import VERBS, RuleParaphraser
from magma_core.bench.paraphrase_condition import apply_paraphrase

FRAMES = re.compile(r"^(Please|Could you|Can you|I would like you to) (\w+)")
SENTENCES = [
    "Put the block on target_a.",
    "In which zone is the blue cube now?",
    "Someone moved the cube: put it in zone_a.",
    "First put red_cube in zone_a, then put green_cube in zone_b.",
    "Tell me how many cubes are in zone_a.",
    "The red cube must never go in zone_b.",
    "Sort the cubes: put the red_cube in zone_a, then the green_cube in zone_b.",
    "Pick up the cube. Then place it in zone_b.",
    "What is on the shelf?",
    "Please move the red_cube to zone_b.",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_every_variant_is_a_sentence_a_person_would_say(text):
    for seed in range(20):
        variant = RuleParaphraser().paraphrase(text, seed)
        for clause in re.split(r"(?<=[.!?:])\s+", variant):
            framed = FRAMES.match(clause[:1].upper() + clause[1:])
            if framed:  # a frame wraps a verb, never "Please in which ..." or "Could you the ..."
                word = framed.group(2).lower()
                assert word in VERBS or word in ("first", "then", "now", "let"), variant
        for sentence in re.split(r"(?<=[.!?])\s+", variant):
            if re.search(r"(^|: )(Could|could|Can|can) you", sentence):
                assert sentence.endswith("?"), variant
        if text.endswith("?"):
            assert variant.endswith("?") and not variant.startswith(("Please", "Could", "Now")), variant
        if text.startswith("The red cube"):  # a statement: kept as written
            assert variant == text


def test_imperatives_and_questions_always_change():
    for text in SENTENCES:
        if not text.startswith("The red cube"):
            assert all(RuleParaphraser().paraphrase(text, s) != text for s in range(10)), text


def test_the_condition_takes_words_a_stage_constructor_makes():
    """The scaffold's stage builds its instruction from a target: the spec arguments hold no
    instruction, and the condition refused such a suite ("no instruction changes")."""
    from engine.scenario import PlaceCubeStage, make_task
    from magma_core.bench.task_spec import task_from_spec, task_to_spec
    from magma_core.simulation.data_structures import ToolCall
    from magma_core.simulation.tasks import PerfectTrace, ToolCallEvent, UserEvent

    stage = PlaceCubeStage("zone_a", "Put the cube in zone A.")
    task = make_task([stage], name="Words")
    task.perfect_trace = lambda: PerfectTrace([UserEvent("Put the cube in zone A."),
                                               ToolCallEvent([ToolCall("pick", {"object": "cube"}, "panda")])])
    spec = task_to_spec(task)
    del spec["stages"][0]["spec"]["arguments"]["instruction"]  # as if the constructor made them
    spec["stages"][0]["spec"]["arguments"]["area"] = "zone_a"
    spec, interventions = apply_paraphrase(spec, {})
    (intervention,) = interventions
    assert intervention["original"] == "Put the cube in zone A."
    assert spec["stages"][0]["instruction"] == intervention["variant"] != intervention["original"]
    assert spec["perfect_trace"]["events"][0]["content"] == intervention["variant"]
    rebuilt = task_from_spec(spec)
    assert rebuilt.stages[0].stage_input.instruction.get_content() == intervention["variant"]
    assert task_to_spec(rebuilt)["stages"][0]["instruction"] == intervention["variant"]  # round trip
