"""Stage verification and boundaries: FAILED / FINISH / ONGOING / EXCEEDED, budgets,
reset_at_end, entry transitions, error sampling, and the stage kinds (action, text-only
SAY_ONLY and JUDGE, tools before the answer)."""

from __future__ import annotations

import pytest
import torch

from engine.helpers import PICK, PLACE_A, act, say, tc
from engine.scenario import (
    AskStage,
    MachineStage,
    MoveCubeAtEntry,
    MoveCubeReturningCopy,
    NamedError,
    PlaceCubeStage,
    make_task,
)
from magma_core.simulation.data_structures import StageState, StageSuccess
from magma_core.simulation.executor import EXCEEDED, FAILED, SUCCESS, Executor
from magma_core.simulation.stage import TextOnlyValidationMode

SAY_ONLY = TextOnlyValidationMode.SAY_ONLY


# -- verification outcomes -------------------------------------------------------------------
def test_must_fail_stage_ends_the_episode_failed(world) -> None:
    executor = world(make_task([PlaceCubeStage()])).executor
    out = executor.submit({0: act("forbidden")})[0]
    assert out.stage_success is StageSuccess.FAILED and out.status == FAILED
    assert out.failure_reason == "This is forbidden."
    assert out.next_view.episode_over
    assert executor.record(0).reason == "This is forbidden."


def test_exceeded_ends_the_episode_once_effective_calls_reach_the_maximum(world) -> None:
    executor = world(make_task([PlaceCubeStage(target=1, maximum=3)])).executor
    out = executor.submit({0: act("detect")})[0]
    assert out.status == "running" and out.stage_state is StageState.OPTIMAL
    out = executor.submit({0: act("detect")})[0]
    assert out.status == "running" and out.stage_state is StageState.ACCEPTABLE
    out = executor.submit({0: act("detect")})[0]
    assert out.stage_state is StageState.EXCEEDED and out.status == EXCEEDED
    assert out.next_view.episode_over
    assert executor.record(0).stage_state_counts()["EXCEEDED"] == 1


def test_forgiven_calls_do_not_count_towards_exceeded(world) -> None:
    from engine.scenario import SlipAfterPick

    executor = world(make_task([PlaceCubeStage(target=1, maximum=2, errors=[SlipAfterPick()])])).executor
    out = executor.submit({0: PICK})[0]  # slips: forgiven
    assert out.calls[0].forgiven and out.forgiven_tool_calls == 1
    out = executor.submit({0: PICK})[0]
    assert out.calls[0].forgiven and out.status == "running"  # 2 calls, 0 effective


def test_acceptable_when_finishing_over_target(world) -> None:
    executor = world(make_task([PlaceCubeStage(target=2, maximum=5)])).executor
    executor.submit({0: act("detect")})
    executor.submit({0: PICK})
    out = executor.submit({0: PLACE_A})[0]
    assert out.stage_success is StageSuccess.FINISH and out.stage_state is StageState.ACCEPTABLE
    assert out.status == SUCCESS


def test_unknown_target_is_unassessed(world) -> None:
    executor = world(make_task([PlaceCubeStage(target=None, maximum=4)])).executor
    executor.submit({0: PICK})
    out = executor.submit({0: PLACE_A})[0]
    assert out.stage_state is StageState.UNASSESSED and out.status == SUCCESS


def test_no_action_on_an_action_stage(world) -> None:
    executor = world(make_task([PlaceCubeStage()])).executor
    out = executor.submit({0: say("I will think about it.")})[0]
    assert out.stage_success is StageSuccess.ONGOING and out.status == "running"
    assert out.calls == [] and out.tool_calls == 0 and out.verification is None
    assert out.message.startswith("No action")
    assert out.next_view.kind == "env"
    step = executor.record(0).steps[0]
    assert step.decision.say == "I will think about it." and step.tool_calls == 0


# -- boundaries ----------------------------------------------------------------------------------
def test_reset_at_end_restores_the_reference_state_at_the_boundary(world) -> None:
    run = world(make_task([MachineStage(reset_at_end=True), PlaceCubeStage()]), 2)
    start = run.cube(0)
    run.executor.submit({0: act("switch_machine", on=True), 1: act("switch_machine", on=True)})
    assert not run.machine_on(0) and not run.machine_on(1)  # both reset at the boundary
    assert torch.allclose(run.cube(0), start, atol=1e-3)
    run2 = world(make_task([MachineStage(), PlaceCubeStage()]))
    run2.executor.submit({0: act("switch_machine", on=True)})
    assert run2.machine_on(0)  # without reset_at_end the machine stays on


def test_reset_at_end_moves_to_the_completion_stage(world) -> None:
    """A flagged stage's reset happens after the completion answer, not before."""
    run = world(make_task([MachineStage(flag=True, reset_at_end=True), PlaceCubeStage("zone_b", "Zone B.")]))
    out = run.executor.submit({0: act("switch_machine", on=True)})[0]
    assert out.next_view.stage_index == 1 and out.next_view.text_only
    assert run.machine_on(0)  # not reset yet
    out = run.executor.submit({0: say("The machine is on.")})[0]
    assert out.next_view.stage_index == 2
    assert not run.machine_on(0)  # reset at the end of the completion stage


def test_entry_transition_applies_to_that_slot_only_at_its_boundary(world) -> None:
    task = make_task([MachineStage(), PlaceCubeStage(entry_transition=MoveCubeAtEntry(x=0.1))])
    run = world(task, 2)
    before = run.cube(1)
    out = run.executor.submit({0: act("switch_machine", on=True), 1: act("detect")})
    assert out[0].next_view.stage_index == 1 and out[1].next_view.stage_index == 0
    assert abs(float(run.cube(0)[0]) - 0.1) < 1e-3
    assert torch.allclose(run.cube(1), before, atol=1e-3)


def test_entry_transition_of_stage_zero_and_a_returned_new_state(world) -> None:
    task = make_task([PlaceCubeStage(entry_transition=MoveCubeReturningCopy(y=-0.05))])
    run = world(task, 2)
    assert abs(float(run.cube(0)[1]) + 0.05) < 1e-3 and abs(float(run.cube(1)[1]) + 0.05) < 1e-3


def test_errors_are_sampled_per_stage_with_the_slot_seed(fake) -> None:
    errors = [NamedError(n) for n in "ABCDE"]
    task = make_task(
        [
            PlaceCubeStage(errors=errors, min_errors=1, max_errors=3),
            PlaceCubeStage("zone_b", "Zone B.", errors=[NamedError("Z")], min_errors=0, max_errors=1),
        ]
    )
    executor = fake(task, 3, seed=11).executor

    def sampled() -> list[dict]:
        return [executor.record(s).stages[0].active_errors for s in range(3)]

    first = sampled()
    assert all(1 <= len(s) <= 3 and set(s) <= set("ABCDE") for s in first)
    assert first[1]["A" if "A" in first[1] else next(iter(first[1]))]["slot"] == 1
    executor.reset(seed=11)
    assert sampled() == first  # same seeds, same sampling
    draws = set()
    for seed in range(30):
        executor.reset_slot(0, seed)
        draws.add(tuple(sorted(executor.record(0).stages[0].active_errors)))
    assert len(draws) > 5  # the RNG is seeded per slot, not fixed
    executor.reset_slot(0, 4)
    executor.submit({0: PICK})
    executor.submit({0: PLACE_A})
    stage1 = executor.record(0).stages[1]
    assert stage1.started and set(stage1.active_errors) <= {"Z"}


def test_zero_sampled_errors_is_not_resampled(fake) -> None:
    task = make_task([PlaceCubeStage(errors=[NamedError("A")], min_errors=0, max_errors=0, maximum=9)])
    executor = fake(task).executor
    for _ in range(3):
        executor.submit({0: act("detect")})
    assert executor.record(0).stages[0].active_errors == {}


# -- text-only stages ------------------------------------------------------------------------------
def test_say_only_stage_accepts_any_non_empty_message(world) -> None:
    executor = world(make_task([AskStage(mode=SAY_ONLY)])).executor
    assert executor.agent_view(0).text_only
    out = executor.submit({0: say("Zone A, I think.")})[0]
    assert out.stage_success is StageSuccess.FINISH and out.status == SUCCESS
    assert out.verification == 1


def test_empty_answer_fails_a_text_only_stage(world) -> None:
    executor = world(make_task([AskStage(mode=SAY_ONLY)])).executor
    out = executor.submit({0: say("   ")})[0]
    assert out.stage_success is StageSuccess.FAILED and out.status == FAILED
    assert out.failure_reason == "The text-only answer is empty."


def test_judge_stage_uses_the_judge(world, judge) -> None:
    task = make_task([PlaceCubeStage(), AskStage("Where is the cube?")])
    executor = world(task, judge=judge).executor
    executor.submit({0: PICK})
    executor.submit({0: PLACE_A})
    out = executor.submit({0: say("It is in zone A.")})[0]
    assert out.stage_success is StageSuccess.FINISH and out.status == SUCCESS
    assert judge.calls == [("The answer says the cube is in zone A.", "Where is the cube?", "It is in zone A.")]
    assert executor.record(0).steps[-1].judge["ok"] is True


def test_judge_rejection_fails_the_stage(fake, judge) -> None:
    executor = fake(make_task([AskStage()]), judge=judge).executor
    out = executor.submit({0: say("Zone B.")})[0]
    assert out.stage_success is StageSuccess.FAILED and out.failure_reason == "does not name zone A"


def test_linked_judge_stage_asks_with_the_last_user_instruction(fake, judge) -> None:
    task = make_task([MachineStage("Switch it on."), AskStage(None)])
    executor = fake(task, judge=judge).executor
    executor.submit({0: act("switch_machine", on=True)})
    executor.submit({0: say("zone A")})
    assert judge.calls[0][1] == "Switch it on."


def test_executor_without_judge_refuses_judge_stages(fake) -> None:
    with pytest.raises(ValueError, match="no judge"):
        fake(make_task([AskStage()]))


def test_judge_object_with_ok_attribute_is_accepted(fake) -> None:
    class OkJudge:
        def judge(self, rule: str, question: str, answer: str):
            from magma_core.judge import Verdict

            return Verdict(ok=True, reason="fine")

    out = fake(make_task([AskStage()]), judge=OkJudge()).executor.submit({0: say("x")})[0]
    assert out.status == SUCCESS


def test_tool_call_on_a_text_only_stage_fails_it(world, judge) -> None:
    executor = world(make_task([AskStage()]), judge=judge).executor
    out = executor.submit({0: act("detect")})[0]
    assert out.stage_success is StageSuccess.FAILED and out.status == FAILED
    assert out.failure_reason.startswith("The answer called a tool")
    assert out.tool_calls == 1 and judge.calls == []


def test_allowed_tools_before_the_answer_run_as_a_batch(world) -> None:
    stage = AskStage(mode=SAY_ONLY, allow_tools=True, allowed_tools=["switch_machine"])
    run = world(make_task([stage]))
    out = run.executor.submit({0: act("switch_machine", on=True)})[0]
    assert out.calls[0].ok and run.machine_on(0)  # a normal batch, state update included
    assert out.stage_success is StageSuccess.ONGOING and out.status == "running"
    out = run.executor.submit({0: act("detect")})[0]
    assert out.stage_success is StageSuccess.FAILED
    assert out.failure_reason == ("detect is not allowed in this stage: it wants an answer to the user in "
                                  "plain text (before answering it allows only switch_machine).")
    record = run.executor.record(0).to_dict()  # two calls: over its budget
    assert record["stages"][0]["success"] == "FAILED" and record["stages"][0]["state"] == "EXCEEDED"


def test_a_text_only_refusal_never_names_a_tool_the_task_lacks(world) -> None:
    stage = AskStage(mode=SAY_ONLY, allow_tools=True, allowed_tools=["no_such_tool"])
    run = world(make_task([stage]))
    out = run.executor.submit({0: act("detect")})[0]
    assert out.failure_reason == "detect is not allowed in this stage: it wants an answer to the user in plain text."
    # the failed stage, within its budget, has no budget score: it is not OPTIMAL
    record = run.executor.record(0).to_dict()
    assert record["stages"][0]["success"] == "FAILED" and record["stages"][0]["state"] is None


def test_empty_allowed_tools_means_all_tools(world) -> None:
    stage = AskStage(mode=SAY_ONLY, allow_tools=True)
    executor = world(make_task([stage])).executor
    out = executor.submit({0: act("detect")})[0]
    assert out.calls[0].ok and out.status == "running"
    out = executor.submit({0: act(tc("switch_machine", on=True))})[0]
    assert out.calls[0].ok
    assert out.status == EXCEEDED  # AskStage allows at most 2 calls: the 2nd must finish it


def test_say_with_calls_runs_the_calls(world) -> None:
    executor = world(make_task([PlaceCubeStage()])).executor
    decision = act("pick", object="cube")
    decision.say = "Picking."
    out = executor.submit({0: decision})[0]
    assert out.calls[0].ok and executor.record(0).steps[0].decision.say == "Picking."


@pytest.mark.sim
def test_a_new_executor_builds_a_real_sim_when_none_is_given(cube_world) -> None:
    with Executor(make_task([MachineStage()]), 1, seed=1) as executor:
        out = executor.submit({0: act("switch_machine", on=True)})[0]
        assert out.status == SUCCESS
        assert executor.sim.num_slots == 1



def test_judge_without_a_verdict_ends_the_episode_as_judge_unavailable(fake) -> None:
    from magma_core.judge import Verdict

    class BrokenJudge:
        def judge(self, rule: str, question: str, answer: str) -> Verdict:
            return Verdict(ok=False, reason="no verdict", error="invalid JSON, 3 attempts")

    executor = fake(make_task([AskStage()]), judge=BrokenJudge()).executor
    out = executor.submit({0: say("zone A")})[0]
    assert out.status == "judge_unavailable"  # neither the agent's failure nor a scenario bug
    assert "invalid JSON" in executor.record(0).reason
    assert executor.record(0).traceback is None
