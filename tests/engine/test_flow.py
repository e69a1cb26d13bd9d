"""Whole episodes: the seed task, stage inputs and views, completion stages, two slots."""

from __future__ import annotations

import json

import pytest

from engine.helpers import PICK, PLACE_A, PLACE_B, act, feedback, say
from engine.scenario import MachineStage, PlaceCubeStage, SeedTask, make_task
from magma_core.simulation.data_structures import StageState, StageSuccess
from magma_core.simulation.executor import SUCCESS


def test_seed_task_runs_to_success_every_stage_optimal(world) -> None:
    task = SeedTask()
    run = world(task)
    executor = run.executor
    assert [type(s).__name__ for s in executor.stages] == [
        "MachineStage",
        "PlaceCubeStage",
        "CompletionAnswerStage",
        "PlaceCubeStage",
    ]
    assert len(task.stages) == 3  # the task itself is untouched
    outcomes = [executor.submit({0: d})[0] for d in task.perfect_trace().decisions()]
    assert [o.status for o in outcomes] == ["running"] * 5 + [SUCCESS]
    assert all(c.ok for o in outcomes for c in o.calls)
    finished = [o for o in outcomes if o.stage_success is StageSuccess.FINISH]
    assert [o.stage_index for o in finished] == [0, 1, 2, 3]
    assert all(o.stage_state is StageState.OPTIMAL for o in finished)
    record = executor.record(0)
    assert record.status == SUCCESS
    assert record.stage_state_counts()["OPTIMAL"] == 4
    assert record.stages_passed == 4
    data = json.loads(json.dumps(record.to_dict()))
    assert data["status"] == "success"
    assert [s["decision"] for s in data["steps"]][0]["tool_calls"][0]["name"] == "switch_machine"
    assert [log["function"] for log in data["logs"]] == ["pick", "place", "pick", "place"]
    assert {log["stage_id"] for log in data["logs"]} == {1, 3}
    assert data["steps"][1]["calls"][0]["ok"] is True
    assert all("total_s" in s["timings"] for s in data["steps"])
    assert data["timings"]["engine_s"] > 0
    if run.real:
        assert data["timings"]["sim_steps"] > 0
    assert run.machine_on()


def test_views_follow_the_stage_inputs(world) -> None:
    """Direct input (user), delayed input after an action stage (status then user),
    EmptyInstruction stage (env status), direct input after a text-only stage (user only)."""
    task = SeedTask()
    executor = world(task).executor
    view = executor.agent_view(0)
    assert (view.kind, view.instruction) == ("user", "Switch the machine on.")
    assert len(view.messages) == 1 and not view.linked_to_prev
    assert view.stage_index == 0 and view.num_stages == 4 and not view.episode_over
    assert view.attributes["known_robots"] == executor.robot_names == view.robot_names
    assert {t["name"] for t in view.tools} >= {"pick", "place", "switch_machine", "detect"}
    assert view.feedback is None and view.status == "running"

    outcome = executor.submit({0: act("switch_machine", on=True)})[0]
    view = outcome.next_view
    assert view.stage_index == 1
    assert [m.kind for m in view.messages] == ["env", "user"]  # delayed input
    assert "Machine switched on." in feedback(view.messages[0].content)["infos"]
    assert (view.kind, view.instruction) == ("user", "Now put the cube in zone A.")

    view = executor.submit({0: PICK})[0].next_view
    assert view.kind == "env" and view.stage_index == 1
    assert feedback(view.instruction)["previous_tool_call"][0]["name"] == "pick"
    assert "pick succeed" in view.feedback["infos"]

    view = executor.submit({0: PLACE_A})[0].next_view  # finishes the flagged stage
    assert view.stage_index == 2 and view.text_only and view.linked_to_prev
    assert view.kind == "env" and len(view.messages) == 1
    assert "place succeed" in feedback(view.instruction)["infos"]

    view = executor.submit({0: say("Done: the cube is in zone A.")})[0].next_view
    assert view.stage_index == 3 and not view.text_only
    assert [m.kind for m in view.messages] == ["user"]  # after a text-only stage: no status
    assert view.instruction == "Someone moved the cube. Put it in zone B."


def test_completion_stage_allows_detection_tools_before_the_answer(world) -> None:
    executor = world(make_task([PlaceCubeStage(flag=True)])).executor
    executor.submit({0: PICK})
    executor.submit({0: PLACE_A})
    outcome = executor.submit({0: act("detect")})[0]
    assert outcome.stage_index == 1 and outcome.stage_success is StageSuccess.ONGOING
    assert outcome.calls[0].ok and outcome.calls[0].message == "I see: cube."
    assert outcome.status == "running"
    outcome = executor.submit({0: say("All done.")})[0]
    assert outcome.stage_success is StageSuccess.FINISH
    assert outcome.stage_state is StageState.OPTIMAL  # 1 detection call within target 1
    assert outcome.status == SUCCESS


def test_completion_stage_refuses_other_tools(world) -> None:
    executor = world(make_task([PlaceCubeStage(flag=True)])).executor
    executor.submit({0: PICK})
    executor.submit({0: PLACE_A})
    outcome = executor.submit({0: PICK})[0]
    assert outcome.stage_success is StageSuccess.FAILED and outcome.status == "failed"
    assert "pick is not allowed in this stage" in outcome.failure_reason
    assert not outcome.calls[0].ok


@pytest.mark.parametrize("num_slots", [2])
def test_two_slots_run_different_decisions_in_the_same_steps(world, num_slots: int) -> None:
    run = world(make_task([PlaceCubeStage("zone_a"), PlaceCubeStage("zone_b", "Now zone B.")]), num_slots)
    executor = run.executor
    before = run.cube(1)
    outcomes = executor.submit({0: PICK, 1: act("detect")})
    assert run.motion.runs[-1] == {0: ["pick"]}  # detect has no motion
    outcomes = executor.submit({0: PLACE_A, 1: PICK})
    assert run.motion.runs[-1] == {0: ["place"], 1: ["pick"]}  # one motion run, both slots
    assert outcomes[0].stage_success is StageSuccess.FINISH and outcomes[0].next_view.stage_index == 1
    assert outcomes[1].stage_success is StageSuccess.ONGOING and outcomes[1].calls[0].ok
    assert run.cube(1)[2] > before[2] + 0.05  # slot 1's cube is up in the gripper
    outcomes = executor.submit({0: PICK, 1: PLACE_B})
    assert run.motion.runs[-1] == {0: ["pick"], 1: ["place"]}
    assert outcomes[1].calls[0].ok  # placed, but zone B is not stage 0's goal
    assert outcomes[1].stage_success is StageSuccess.ONGOING and outcomes[1].next_view.stage_index == 0
    assert outcomes[0].status == outcomes[1].status == "running"
    assert executor.record(0).steps[-1].stage_index == 1


def test_a_slot_can_be_left_out_of_a_submit(fake) -> None:
    run = fake(make_task([MachineStage()]), 2)
    out = run.executor.submit({1: act("switch_machine", on=True)})
    assert set(out) == {1} and out[1].status == SUCCESS
    assert run.executor.agent_view(0).status == "running"
    assert not run.machine_on(0) and run.machine_on(1)
