"""Engine rules kept from the predecessor: planner failures are forgiven (at most 3 per
stage) and recorded as such; a text-only answer that is markup is rejected before judging;
agent_names=["default"] means the world's robots."""

from __future__ import annotations

import logging

import pytest

from engine.helpers import act, say, tc
from engine.scenario import AskStage, PlaceCubeStage, make_task
from magma_core.simulation.data_structures import ToolErrorFlag
from magma_core.simulation.executor.slots import MAX_FORGIVEN_TOOL_CALLS_PER_STAGE
from magma_core.simulation.executor.verification import MARKUP_ANSWER_FAILURE
from magma_core.simulation.stage import TextOnlyValidationMode
from magma_core.simulation.tasks import InitializationParameters


def test_planner_failures_are_forgiven_up_to_three_per_stage(fake) -> None:
    run = fake(make_task([PlaceCubeStage(maximum=10), PlaceCubeStage("zone_b", maximum=10)]))
    run.motion.flaky[0] = 99  # every motion of slot 0 fails to plan
    forgiven = []
    for _ in range(4):
        out = run.executor.submit({0: act("push", object="cube", dx=0.05)})[0]
        call = out.calls[0]
        assert call.failure_flag is ToolErrorFlag.PLANNER_ERROR and not call.ok
        forgiven.append((call.forgiven, out.forgiven_tool_calls))
    assert MAX_FORGIVEN_TOOL_CALLS_PER_STAGE == 3
    assert forgiven == [(True, 1), (True, 2), (True, 3), (False, 3)]
    assert out.tool_calls == 4 and out.status == "running"
    stage = run.executor.record(0).stages[0]
    assert (stage.tool_calls, stage.forgiven_tool_calls) == (4, 3)
    step = run.executor.record(0).steps[0]
    assert step.calls[0].failure_flag is ToolErrorFlag.PLANNER_ERROR and step.calls[0].forgiven


def test_the_forgiveness_count_restarts_with_each_stage(fake) -> None:
    run = fake(make_task([PlaceCubeStage(maximum=10), PlaceCubeStage("zone_b", maximum=10)]))
    run.motion.flaky[0] = 99
    for _ in range(3):
        run.executor.submit({0: act("push", object="cube", dx=0.05)})
    run.motion.flaky[0] = 0
    run.executor.submit({0: act("pick", object="cube")})
    out = run.executor.submit({0: act("place", area="zone_a")})[0]
    assert out.stage_state.name == "OPTIMAL"  # 5 calls, 3 forgiven: 2 = the target
    assert run.executor.agent_view(0).stage_index == 1
    run.motion.flaky[0] = 99
    out = run.executor.submit({0: act("push", object="cube", dx=0.05)})[0]
    assert out.calls[0].forgiven and out.forgiven_tool_calls == 1


@pytest.mark.parametrize("mode", [TextOnlyValidationMode.SAY_ONLY, TextOnlyValidationMode.JUDGE])
@pytest.mark.parametrize("answer", ['{"say": "done"}', "  <answer>zone A</answer>", "{zone A}"])
def test_markup_answers_are_rejected_before_judging(fake, judge, mode, answer) -> None:
    run = fake(make_task([AskStage(mode=mode)]), judge=judge)
    out = run.executor.submit({0: say(answer)})[0]
    assert out.status == "failed" and out.failure_reason == MARKUP_ANSWER_FAILURE
    assert judge.calls == []


def test_a_plain_answer_still_reaches_the_judge(fake, judge) -> None:
    run = fake(make_task([AskStage()]), judge=judge)
    out = run.executor.submit({0: say("The cube is in zone A {as asked}.")})[0]
    assert out.status == "success" and len(judge.calls) == 1


def test_agent_names_default_become_the_world_names_with_a_notice(fake, caplog) -> None:
    task = make_task([PlaceCubeStage()],
                     initialization_parameters=InitializationParameters(agent_names=["default"]))
    with caplog.at_level(logging.WARNING):
        run = fake(task)
    assert run.executor.robot_names == run.sim.robot_names != ["default"]
    assert "agent_names=['default'] replaced" in caplog.text
    assert run.executor.agent_view(0).attributes["known_robots"] == run.sim.robot_names
    out = run.executor.submit({0: act(tc("pick", run.sim.robot_names[0], object="cube"))})[0]
    assert out.calls[0].ok


def test_a_verifier_answering_not_ok_is_a_bad_call_not_retried_nor_forgiven(fake) -> None:
    run = fake(make_task([PlaceCubeStage(maximum=10)]))
    out = run.executor.submit({0: act("place", area="zone_a")})[0]  # holds nothing
    call = out.calls[0]
    assert not call.ok and call.failure_flag is ToolErrorFlag.BAD_CALL
    assert call.attempts == 1 and not call.forgiven and out.forgiven_tool_calls == 0
