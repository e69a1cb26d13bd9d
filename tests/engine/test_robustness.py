"""Untrusted decisions, exceptions in scenario code, episode control, determinism."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from engine.helpers import PICK, PLACE_A, act, say
from engine.scenario import (
    BrokenGoalStage,
    BrokenTransition,
    MachineStage,
    PlaceCubeStage,
    make_task,
)
from magma_core.simulation.data_structures import Decision, StageSuccess, ToolCall, ToolErrorFlag
from magma_core.simulation.errors import BaseError
from magma_core.simulation.executor import ERROR, SUCCESS


# -- malformed decisions ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "decision",
    [
        None,
        "pick the cube",
        42,
        {"say": 3},
        {"tool_calls": "pick"},
        Decision(say=None),  # type: ignore[arg-type]
    ],
)
def test_malformed_decision_is_recorded_and_never_raises(fake, decision: Any) -> None:
    executor = fake(make_task([PlaceCubeStage()])).executor
    out = executor.submit({0: decision})[0]
    if isinstance(decision, Decision):  # say=None is read as an empty say: a no-action step
        assert out.message.startswith("No action")
    else:
        assert out.failure_reason.startswith("The decision was malformed")
    assert out.status == "running" and out.stage_success is StageSuccess.ONGOING
    assert out.tool_calls == 0
    json.dumps(executor.record(0).to_dict())


def test_malformed_calls_become_failed_calls(world) -> None:
    executor = world(make_task([PlaceCubeStage(maximum=9)])).executor
    decision = Decision(
        tool_calls=[
            "pick(cube)",  # type: ignore[list-item]
            ToolCall("", {}),
            ToolCall("pick", ["cube"]),  # type: ignore[arg-type]
            ToolCall("pick", {"object": "cube"}, 7),  # type: ignore[arg-type]
            {"name": "detect"},  # a mapping is accepted
        ]
    )
    out = executor.submit({0: decision})[0]
    assert [c.ok for c in out.calls] == [False, False, False, False, True]
    assert all(c.failure_flag is ToolErrorFlag.BAD_CALL for c in out.calls[:4])
    assert "must be a dict" in out.calls[2].message
    assert out.tool_calls == 5 and out.status == "running"
    json.dumps(executor.record(0).to_dict())


def test_dict_decision_is_accepted(fake) -> None:
    executor = fake(make_task([MachineStage()])).executor
    out = executor.submit(
        {0: {"say": "", "tool_calls": [{"name": "switch_machine", "arguments": {"on": True}}]}}
    )[0]
    assert out.status == SUCCESS


def test_bad_slot_is_a_programming_error(fake) -> None:
    executor = fake(make_task([MachineStage()])).executor
    with pytest.raises(IndexError):
        executor.submit({3: say("hi")})
    with pytest.raises(IndexError):
        executor.agent_view(-1)


# -- exceptions in scenario code ----------------------------------------------------------------
def _assert_error(executor: Any, slot: int, text: str) -> None:
    record = executor.record(slot)
    assert record.status == ERROR
    assert text in record.traceback
    assert executor.agent_view(slot).episode_over
    json.dumps(record.to_dict())


@pytest.mark.parametrize(
    ("tool", "text"),
    [("explode", "the tool exploded"), ("bad_verifier", "the verifier broke"), ("bad_update", "nope")],
)
def test_exception_in_a_tool_ends_only_that_slot(world, tool: str, text: str) -> None:
    run = world(make_task([PlaceCubeStage(maximum=9)]), 2)
    out = run.executor.submit({0: act(tool), 1: PICK})
    assert out[0].status == ERROR and text in (out[0].failure_reason or "") + run.executor.record(0).traceback
    _assert_error(run.executor, 0, text)
    assert out[1].status == "running" and out[1].calls[0].ok
    assert run.executor.submit({1: PLACE_A})[1].status == SUCCESS
    after = run.executor.submit({0: PICK})[0]  # a finished slot answers without running
    assert after.calls == [] and after.status == ERROR


def test_exception_in_a_goal(world) -> None:
    run = world(make_task([BrokenGoalStage()]), 2)
    out = run.executor.submit({0: act("detect")})
    _assert_error(run.executor, 0, "the goal broke")
    assert out[0].status == ERROR and run.executor.status(1) == "running"


def test_exception_in_a_transition_at_a_boundary(world) -> None:
    task = make_task([MachineStage(), PlaceCubeStage(entry_transition=BrokenTransition())])
    run = world(task)
    out = run.executor.submit({0: act("switch_machine", on=True)})[0]
    assert out.stage_success is StageSuccess.FINISH and out.status == ERROR
    _assert_error(run.executor, 0, "the transition broke")


def test_exception_in_the_first_transition_ends_the_episode_at_reset(fake) -> None:
    executor = fake(make_task([PlaceCubeStage(entry_transition=BrokenTransition())])).executor
    _assert_error(executor, 0, "the transition broke")


class ExplodingError(BaseError):
    def initialize(self, obs: Any, env_id: int) -> dict | None:
        raise RuntimeError("the error could not initialize")


def test_exception_in_error_sampling(fake) -> None:
    executor = fake(make_task([PlaceCubeStage(errors=[ExplodingError()])])).executor
    _assert_error(executor, 0, "could not initialize")


# -- episode control -----------------------------------------------------------------------------
def test_front_end_can_end_an_episode_with_its_own_status(fake) -> None:
    executor = fake(make_task([PlaceCubeStage()])).executor
    executor.submit({0: say("hmm")})
    assert executor.end_episode(0, "no_action", "3 decisions without a tool call")
    record = executor.record(0)
    assert (record.status, record.reason) == ("no_action", "3 decisions without a tool call")
    assert executor.agent_view(0).episode_over and executor.status(0) == "no_action"
    assert not executor.end_episode(0, "decision_cap")  # already over: unchanged
    with pytest.raises(ValueError):
        executor.end_episode(0, "running")


def test_reset_slot_starts_a_fresh_episode_in_one_slot(world) -> None:
    run = world(make_task([MachineStage()]), 2)
    executor = run.executor
    executor.submit({0: act("switch_machine", on=True), 1: act("switch_machine", on=True)})
    old = executor.record(0)
    executor.reset_slot(0, seed=123)
    assert executor.status(0) == "running" and executor.status(1) == SUCCESS
    assert not run.machine_on(0) and run.machine_on(1)
    assert executor.record(0) is not old and old.status == SUCCESS
    assert executor.record(0).seed == 123 and executor.record(0).steps == []


def test_same_seed_same_initial_state(world) -> None:
    run = world(make_task([PlaceCubeStage()]), 2)
    executor = run.executor
    executor.reset(seed=[5, 6])
    cubes = run.obs()["extra"]["cube"].clone()
    assert not torch.allclose(cubes[0], cubes[1])
    executor.submit({0: PICK, 1: PICK})
    executor.reset(seed=[6, 5])
    swapped = run.obs()["extra"]["cube"]
    assert torch.allclose(swapped[0], cubes[1], atol=1e-5)
    assert torch.allclose(swapped[1], cubes[0], atol=1e-5)
    executor.reset_slot(1, 6)
    assert torch.allclose(run.obs()["extra"]["cube"][1], cubes[1], atol=1e-5)
    assert [executor.record(s).seed for s in (0, 1)] == [6, 6]


def test_default_seeds_follow_the_executor_seed(fake) -> None:
    executor = fake(make_task([MachineStage()]), 3, seed=40).executor
    assert [executor.record(s).seed for s in range(3)] == [40, 41, 42]
    executor.reset(seed=7)
    assert [executor.record(s).seed for s in range(3)] == [7, 8, 9]
    executor.reset_slot(2)
    assert executor.record(2).seed == 42
    with pytest.raises(ValueError):
        executor.reset(seed=[1, 2])


def test_close_only_closes_an_owned_sim(fake) -> None:
    run = fake(make_task([MachineStage()]))
    run.executor.close()
    assert not run.sim.closed


def test_agent_error_is_recorded_and_nothing_runs(fake) -> None:
    from magma_core.simulation.data_structures import DecisionError

    run = fake(make_task([MachineStage()]))
    out = run.executor.submit({0: DecisionError("timeout", "the agent did not answer")})[0]
    assert out.status == "running" and out.calls == [] and out.tool_calls == 0
    assert out.failure_reason == "The agent gave no decision (timeout): the agent did not answer"
    step = run.executor.record(0).to_dict()["steps"][0]
    assert "timeout" in step["decision"]["error"]
