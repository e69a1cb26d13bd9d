"""The numbered steps of a tool batch: robots and observations, error hooks, motion and
execution groups, verifiers, state updates, actor protection, logs, attribute edits,
``ok`` versus stage success, planner retries."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine.helpers import PICK, PLACE_A, act, tc
from engine.scenario import (
    SITUATION,
    GripperJam,
    MachineStage,
    NoteAreaStage,
    PlaceCubeStage,
    SlipAfterPick,
    make_task,
)
from magma_core.simulation.data_structures import (
    Observation,
    StageSuccess,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.executor import MAX_PLANNER_RETRIES
from magma_core.simulation.tasks import BaseTask, InitializationParameters
from magma_core.simulation.tools import BaseToolsAPI, register_tool


class SpyTools(BaseToolsAPI):
    """Records what each call receives."""

    seen: list[dict[str, Any]] = []

    @register_tool(description="Record the call.", params_spec={"tag": {"description": "t", "type": str}})
    def spy(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        SpyTools.seen.append(
            {
                "robot": obs.selected_robot_name,
                "attributes": obs.task_attributes,
                "constants": obs.add_constants,
                "context": obs.tool_batch_context,
                "obs": obs.maniskill_obs,
                "env_id": env_id,
                "tag": params["tag"],
                "reserved": obs.tool_batch_context.try_reserve("objects", "cube", params["tag"]),
            }
        )
        return ToolExecution(["OK"], lambda raw: ToolResult(True, params["tag"]))


def spy_task(**fields: Any) -> BaseTask:
    return BaseTask(
        maniskill_env_id="MagmaCube-v1",
        Tools_cls=SpyTools,
        situation_init=SITUATION,
        stages=[MachineStage()],
        tools_constant={"speed": 0.5},
        **fields,
    )


# -- step 1: robots and observations ---------------------------------------------------------
def test_each_call_gets_its_robot_attributes_constants_and_one_shared_batch_context(world) -> None:
    SpyTools.seen.clear()
    run = world(spy_task(), 2)
    run.executor.submit({1: act(tc("spy", tag="a"), tc("spy", run.executor.robot_names[0], tag="b"))})
    first, second = SpyTools.seen
    assert first["robot"] == second["robot"] == run.executor.robot_names[0]
    assert first["env_id"] == second["env_id"] == 1
    assert first["attributes"]["known_robots"] == run.executor.robot_names
    assert first["attributes"]["objects"] == ["cube"]
    assert first["constants"] == {"speed": 0.5}
    assert first["context"] is second["context"]  # one ToolBatchContext per batch
    assert first["reserved"] and not second["reserved"]  # b cannot take a's reservation
    assert first["obs"]["extra"]["cube"].shape[0] == 2  # the batched raw observation


def test_renamed_robots_and_unknown_robot(world) -> None:
    SpyTools.seen.clear()
    run = world(spy_task(initialization_parameters=InitializationParameters(agent_names=["arm"])))
    executor = run.executor
    assert executor.robot_names == ["arm"]
    assert executor.agent_view(0).attributes["known_robots"] == ["arm"]
    out = executor.submit({0: act(tc("spy", "ghost", tag="x"), tc("spy", "arm", tag="y"))})[0]
    bad, good = out.calls
    assert not bad.ok and bad.failure_flag is ToolErrorFlag.BAD_CALL
    assert bad.message == "Unknown robot ghost. Please use only known robot names."
    assert bad.message_is_public and bad.robot == "ghost"
    assert good.ok and good.robot == "arm"
    assert [s["robot"] for s in SpyTools.seen] == ["arm"]
    assert out.tool_calls == 2  # the unknown-robot call counts


def test_robot_count_mismatch_is_refused(fake) -> None:
    with pytest.raises(ValueError, match="names 2 robots"):
        fake(spy_task(initialization_parameters=InitializationParameters(agent_names=["a", "b"])))


def test_bad_arguments_are_bad_calls(world) -> None:
    executor = world(make_task([PlaceCubeStage()])).executor
    out = executor.submit({0: act("pick", object=3)})[0]
    assert not out.calls[0].ok and out.calls[0].failure_flag is ToolErrorFlag.BAD_CALL
    assert "object" in out.calls[0].message
    out = executor.submit({0: act("fly")})[0]
    assert out.calls[0].message == "fly is not a known tool."
    assert out.tool_calls == 2 and out.status == "running"


# -- step 2: error hooks and motion ------------------------------------------------------------
def test_execution_group_runs_calls_in_order_and_all_slots_step_together(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]), 2)
    out = run.executor.submit({0: act(tc("pick", object="cube"), tc("place", area="zone_a")), 1: PICK})
    assert run.motion.runs == [{0: ["pick", "place"], 1: ["pick"]}]
    pick, place = out[0].calls
    assert place.ok and out[1].calls[0].ok
    assert not pick.ok  # verifiers run after the whole batch: the cube is down again
    assert out[0].stage_success is StageSuccess.FINISH  # pick then place, in call order
    assert out[1].stage_success is StageSuccess.ONGOING


def test_pre_execution_error_fails_the_call_before_motion_and_is_forgiven(world) -> None:
    stage = PlaceCubeStage(errors=[GripperJam()])
    run = world(make_task([stage]))
    out = run.executor.submit({0: PICK})[0]
    call = out.calls[0]
    assert not call.ok and call.message == "The gripper jammed."
    assert call.failure_flag is ToolErrorFlag.INJECTION_ERROR and call.injected and call.forgiven
    assert run.motion.runs == []  # nothing moved
    assert (out.tool_calls, out.forgiven_tool_calls) == (1, 1)
    run.executor.submit({0: PICK})
    out = run.executor.submit({0: PLACE_A})[0]
    assert out.stage_success is StageSuccess.FINISH
    assert out.stage_state.name == "OPTIMAL"  # 3 calls, 1 forgiven: 2 effective = target
    record = run.executor.record(0).stages[0]
    assert record.active_errors == {"GripperJam": {"jams": 2}}  # bound lazily, then kept
    assert record.error_descriptions == ["the gripper may jam"]


def test_post_verification_error_changes_the_result(world) -> None:
    run = world(make_task([PlaceCubeStage(errors=[SlipAfterPick()])]))
    call = run.executor.submit({0: PICK})[0].calls[0]
    assert not call.ok and call.message == "The cube slipped."
    assert call.failure_flag is ToolErrorFlag.INJECTION_ERROR and call.forgiven


# -- step 3: verifiers, state updates, protection ------------------------------------------------
def test_state_update_switches_the_machine_in_that_slot_only(world) -> None:
    run = world(make_task([MachineStage()]), 2)
    out = run.executor.submit({1: act("switch_machine", on=True)})[1]
    assert out.calls[0].state_updates == [{"path": ["magma_extra_state", "machine_on"], "value": True}]
    assert run.machine_on(1) and not run.machine_on(0)
    assert out.stage_success is StageSuccess.FINISH  # the stage check saw the refreshed obs


def test_detection_tool_cannot_move_actors(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]))
    before = run.cube()
    out = run.executor.submit({0: act("poke", object="cube")})[0]
    assert out.calls[0].ok
    moved = run.motion.cube_after[-1][0]
    assert torch.linalg.vector_norm(moved[:2] - before[:2]) > 0.01  # the motion did push it
    assert torch.allclose(run.cube(), before, atol=1e-4)  # protection put it back


def test_allowed_moving_actors_decide_what_stays_moved(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]))
    before = run.cube()
    run.executor.submit({0: act("push", object="cube", dx=0.1)})
    pushed = run.cube()
    assert pushed[0] > before[0] + 0.03  # allowed: the push stays
    run.executor.submit({0: act("push", object="cube", dx=0.1, allowed=False)})
    assert run.motion.cube_after[-1][0, 0] > pushed[0] + 0.03  # it moved during the motion
    assert torch.allclose(run.cube(), pushed, atol=1e-4)  # not allowed: restored


def test_any_call_without_an_allow_list_disables_protection(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]))
    before = run.cube()
    # poke (detection, []) and place (None): the merged allow-list is None
    run.executor.submit({0: act(tc("poke", object="cube"), tc("place", area="zone_b"))})
    assert torch.linalg.vector_norm(run.cube()[:2] - before[:2]) > 0.01


# -- step 4: logs, attribute edits, ok versus stage success ----------------------------------------
def test_attribute_edit_applies_in_an_additive_stage(world) -> None:
    executor = world(make_task([NoteAreaStage(additive=True)])).executor
    out = executor.submit({0: act("note_area", area="zone_c")})[0]
    assert out.calls[0].log == {"content": ["areas", "zone_c"], "action": "ADD", "function": "note_area", "stage_id": 0}
    assert out.stage_success is StageSuccess.FINISH and out.status == "success"
    assert executor.record(0).attributes["areas"] == ["zone_a", "zone_b", "zone_c"]


def test_attribute_edit_fails_a_non_additive_stage(world) -> None:
    executor = world(make_task([NoteAreaStage(additive=False)])).executor
    out = executor.submit({0: act("note_area", area="zone_c")})[0]
    assert out.calls[0].ok  # the call itself succeeded
    assert out.stage_success is StageSuccess.FAILED and out.status == "failed"
    assert out.verification == -1
    assert executor.agent_view(0).attributes["areas"] == ["zone_a", "zone_b"]


def test_failed_call_does_not_fail_the_stage(world) -> None:
    executor = world(make_task([PlaceCubeStage()])).executor
    out = executor.submit({0: PLACE_A})[0]  # nothing held
    assert not out.calls[0].ok and out.calls[0].message == "Nothing was held."
    assert out.stage_success is StageSuccess.ONGOING and out.status == "running"
    out = executor.submit({0: act("detect")})[0]  # ok, but the stage is not done
    assert out.calls[0].ok and out.stage_success is StageSuccess.ONGOING


# -- step 5: planner errors ----------------------------------------------------------------------
def test_planner_error_restores_and_retries_the_whole_batch(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]), 2)
    run.motion.flaky[0] = 1  # slot 0's first attempt "fails" after really moving
    out = run.executor.submit({0: act(tc("push", object="cube", dx=0.1), tc("detect")), 1: act("detect")})
    assert run.motion.runs == [{0: ["push", "detect"]}, {0: ["push", "detect"]}]
    assert all(c.ok and c.attempts == 2 for c in out[0].calls)
    assert out[0].tool_calls == 2  # counted once, not per attempt
    assert len(run.executor.record(0).logs) == 0
    first, second = run.motion.cube_after
    assert torch.allclose(first[0], second[0], atol=0.01)  # retry started from the same state
    assert out[1].calls[0].attempts == 1


def test_persistent_planner_error_is_reported_with_the_slot_restored(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]))
    before = run.cube()
    run.motion.flaky[0] = 99
    out = run.executor.submit({0: act(tc("push", object="cube", dx=0.1), tc("detect"))})[0]
    assert len(run.motion.runs) == 1 + MAX_PLANNER_RETRIES
    push, detect = out.calls
    assert push.failure_flag is ToolErrorFlag.PLANNER_ERROR and push.message == "flaky planner"
    assert detect.failure_flag is ToolErrorFlag.PLANNER_ERROR and "undone" in detect.message
    assert push.attempts == 4
    assert push.forgiven and detect.forgiven  # the planner's failure, not the agent's
    assert out.forgiven_tool_calls == 2 and out.stage_state.name == "OPTIMAL"
    assert torch.allclose(run.cube(), before, atol=1e-4)  # no trace of the motion
    assert out.status == "running" and out.tool_calls == 2


def test_unreachable_pose_is_a_planner_error(world) -> None:
    run = world(make_task([PlaceCubeStage(maximum=10)]))
    out = run.executor.submit({0: act("reach_far")})[0]
    assert out.calls[0].failure_flag is ToolErrorFlag.PLANNER_ERROR
    assert out.calls[0].attempts == 1 + MAX_PLANNER_RETRIES
    assert "unreachable" in out.calls[0].message


def test_a_materialised_error_override_imposes_the_errors_and_every_step_describes_them(world) -> None:
    stage = PlaceCubeStage(errors=[GripperJam()], min_errors=0, max_errors=0)  # a draw picks none
    stage.active_error_arguments_override = {"GripperJam": {}}
    run = world(make_task([stage]))
    call = run.executor.submit({0: PICK})[0].calls[0]
    assert not call.ok and call.message == "The gripper jammed." and call.injected
    record = run.executor.record(0)
    assert record.stages[0].active_errors == {"GripperJam": {"jams": 1}}
    assert record.steps[0].error_descriptions == ["the gripper may jam"]
    assert stage.active_error_arguments_override == {"GripperJam": {}}  # a copy was used
    spent = PlaceCubeStage(errors=[GripperJam()])
    spent.active_error_arguments_override = {"GripperJam": {"jams": 1}}  # its one jam is spent
    assert world(make_task([spent])).executor.submit({0: PICK})[0].calls[0].ok


def test_an_override_must_name_every_possible_error() -> None:
    stage = PlaceCubeStage(errors=[GripperJam(), SlipAfterPick()])
    stage.active_error_arguments_override = {"GripperJam": {}}
    with pytest.raises(TypeError, match=r"must name every possible error exactly \(possible: "
                       r"\['GripperJam', 'SlipAfterPick'\], given: \['GripperJam'\]\)"):
        stage.validate()
