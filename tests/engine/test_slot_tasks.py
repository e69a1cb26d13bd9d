"""Per-slot tasks (``reset_slot(..., task=...)``) and the public-vocabulary seam, on the
in-memory stand-in (the real simulator runs them in ``tests/procedural``)."""

from __future__ import annotations

import json

import pytest

from engine.conftest import ScriptedJudge
from engine.scenario import AskStage, PlaceCubeStage, make_task
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.simulation.randomizer import RandomizationSpec, RuntimeRandomizer
from magma_core.simulation.tasks import InitializationParameters
from magma_core.simulation.tools import BaseToolsAPI

TO_A = make_task([PlaceCubeStage("zone_a", "Put the cube in zone_a.")], name="ToA")
TO_B = make_task([PlaceCubeStage("zone_b", "Put the cube in zone_b.")], name="ToB")


def _pick_place(area: str) -> list[Decision]:
    return [Decision(tool_calls=[ToolCall("pick", {"object": "cube"})]),
            Decision(tool_calls=[ToolCall("place", {"area": area})])]


def test_slots_run_different_tasks_side_by_side(fake):
    run = fake(TO_A, num_slots=2)
    executor = run.executor
    executor.reset_slot(1, 5, task=TO_B)
    assert executor.task_of(0) is TO_A and executor.task_of(1) is TO_B
    assert executor.agent_view(1).instruction == "Put the cube in zone_b."
    for a, b in zip(_pick_place("zone_a"), _pick_place("zone_b"), strict=True):
        outcomes = executor.submit({0: a, 1: b})
    assert outcomes[0].status == outcomes[1].status == "success"
    assert executor.record(0).task == "ToA" and executor.record(1).task == "ToB"
    executor.reset_slot(1, 6)  # no task: the executor's own again
    assert executor.task_of(1) is TO_A
    assert executor.agent_view(1).instruction == "Put the cube in zone_a."


class OtherTools(BaseToolsAPI):
    pass


@pytest.mark.parametrize(
    "fields",
    [{"Tools_cls": OtherTools},
     {"initialization_parameters": InitializationParameters(env_options={"num_cubes": 3})},
     {"tools_constant": {"speed": 2}}],
)
def test_a_task_for_another_world_or_tools_is_refused(fake, fields):
    run = fake(TO_A)
    other = make_task([PlaceCubeStage()], name="Other")
    for key, value in fields.items():
        setattr(other, key, value)
    with pytest.raises(ValueError, match="cannot run on this executor"):
        run.executor.reset_slot(0, task=other)
    assert run.executor.task_of(0) is TO_A


def test_a_judged_task_needs_the_executors_judge(fake):
    run = fake(TO_A)
    with pytest.raises(ValueError, match="no judge"):
        run.executor.reset_slot(0, task=make_task([AskStage()], name="Ask"))


# -- the public-vocabulary seam --------------------------------------------------------------
SPEC = RandomizationSpec(
    tool_equivalence={
        "take": {"name": "pick", "parameters": {"item": "object"}},
        "put": {"name": "place", "parameters": {"region": "area"}},
        "push_cube": {"name": "push_cube", "parameters": {}},
    },
    attributes_equivalence={"cube": "block", "zone_a": "dock_a", "zone_b": "dock_b"},
    tools=[{"name": "take", "description": "Take an item.", "parameters": {
        "item": {"description": "item", "type": "str", "required": True}}},
        {"name": "put", "description": "Put it down.", "parameters": {
            "region": {"description": "region", "type": "str", "required": True}}}],
    attribute_keys_order=["areas", "objects"],
)


def _seam(fake, task, **kwargs):
    run = fake(task, **kwargs)
    return PublicVocabularyExecutor(run.executor, RuntimeRandomizer(SPEC))


def test_the_agent_sees_public_names_and_the_engine_runs_canonical_ones(fake):
    seam = _seam(fake, TO_A)
    view = seam.agent_view(0)
    assert view.instruction == "Put the block in dock_a."
    assert [t["name"] for t in view.tools] == ["take", "put"]
    assert list(view.attributes)[:2] == ["areas", "objects"]
    assert view.attributes["objects"] == ["block"] and view.attributes["areas"] == ["dock_a", "dock_b"]
    first = seam.submit({0: Decision(tool_calls=[ToolCall("take", {"item": "block"})])})[0]
    assert first.calls[0].tool == "take" and first.calls[0].arguments == {"item": "block"}
    assert first.calls[0].ok and "block" in first.calls[0].message
    status = json.loads(first.next_view.instruction)
    assert status["previous_tool_call"][0]["name"] == "take"
    assert "take succeed" in status["infos"] and "cube" not in status["infos"]
    last = seam.submit({0: Decision(tool_calls=[ToolCall("put", {"region": "dock_a"})])})[0]
    assert last.status == "success"
    record = seam.record(0).to_dict()
    assert record["randomization"] == SPEC.to_dict()
    assert [c["name"] for s in record["steps"] for c in s["decision"]["tool_calls"]] == ["pick", "place"]


def test_hidden_canonical_names_fail_with_a_public_reason_and_count(fake):
    seam = _seam(fake, TO_A)
    outcome = seam.submit({0: Decision(tool_calls=[ToolCall("take", {"item": "cube"})])})[0]
    call = outcome.calls[0]
    assert not call.ok
    assert (call.tool, call.arguments, call.message) == ("take", {"item": "cube"},
                                                        "`cube` was not detected.")
    assert outcome.tool_calls == 1
    # what the agent sees next shows the refused call as it was sent, untranslated
    for view in (outcome.next_view, seam.agent_view(0)):
        status = json.loads(view.instruction)
        assert status["infos"] == "panda: take failed with message: `cube` was not detected."
        assert status["previous_tool_call"][0]["arguments"] == {"item": "cube"}
        assert view.feedback == status
    mixed = [ToolCall("pick", {"object": "block"}), ToolCall("take", {"item": "block"})]
    outcome = seam.submit({0: Decision(tool_calls=mixed)})[0]
    assert [(c.tool, c.message) for c in outcome.calls][0] == ("pick", "`pick` is not a known tool.")
    assert outcome.calls[1].tool == "take" and outcome.calls[1].ok
    infos = json.loads(seam.agent_view(0).instruction)["infos"].splitlines()
    assert infos[0] == "panda: pick failed with message: `pick` is not a known tool."
    assert infos[1].startswith("panda: take succeed") and "cube" not in infos[1]
    assert outcome.tool_calls == 3
    engine_calls = seam.executor.record(0).steps[-1].calls
    assert engine_calls[0].message == "`pick` is not a known tool."
    assert engine_calls[1].tool == "pick" and engine_calls[1].arguments == {"object": "cube"}


def test_the_judge_compares_the_answer_in_canonical_names(fake):
    judge = ScriptedJudge(expected="zone_a")
    task = make_task([AskStage("Where is the cube?")], name="Ask")
    seam = _seam(fake, task, judge=judge)
    assert seam.agent_view(0).instruction == "Where is the block?"
    outcome = seam.submit({0: Decision(say="The block is in dock_a.")})[0]
    assert outcome.status == "success"
    rule, question, answer = judge.calls[0]
    assert answer == "The cube is in zone_a." and question == "Where is the cube?"


def test_without_a_vocabulary_the_seam_changes_nothing(fake):
    run = fake(TO_A)
    seam = PublicVocabularyExecutor(run.executor)
    assert seam.agent_view(0) == run.executor.agent_view(0)
    assert seam.record(0).to_dict()["randomization"] is None
    seam.set_vocabulary(0, RuntimeRandomizer(SPEC))
    assert seam.vocabulary(0) is not None and seam.agent_view(0).instruction == "Put the block in dock_a."
