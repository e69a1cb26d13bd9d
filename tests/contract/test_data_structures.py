"""Layer-1 data structures: instructions, stage inputs, situations, tool primitives, enums."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.data_structures import (
    EmptyInstruction,
    EnvStateUpdate,
    Log,
    Observation,
    Pose,
    SituationInit,
    StageInput,
    StageState,
    StageSuccess,
    ToolBatchContext,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
    UserInstruction,
)


def ok_verifier(raw_obs: dict) -> ToolResult:
    return ToolResult(ok=True)


# -- instructions and inputs -------------------------------------------------------------------
def test_user_instruction() -> None:
    instruction = UserInstruction("Pick the cube.", has_constraint=True)
    assert instruction.get_content() == "Pick the cube."
    assert instruction.has_constraint and not instruction.is_empty()
    assert UserInstruction("x").has_constraint is False


@pytest.mark.parametrize("content", ["", "   ", None, 3])
def test_user_instruction_needs_non_empty_str(content: object) -> None:
    with pytest.raises(ValueError):
        UserInstruction(content)  # type: ignore[arg-type]


def test_empty_instruction() -> None:
    assert EmptyInstruction().is_empty()
    assert EmptyInstruction().get_content() == ""


@pytest.mark.parametrize("linked", [None, False, True])
def test_empty_instruction_forces_link(linked: bool | None) -> None:
    assert StageInput(EmptyInstruction(), False, linked).linked_to_prev is True


def test_stage_input_link_defaults_to_false() -> None:
    assert StageInput(UserInstruction("a"), True).linked_to_prev is False
    assert StageInput(UserInstruction("a"), True, linked_to_prev=True).linked_to_prev is True


@pytest.mark.parametrize("flag", [None, 1, "yes"])
def test_stage_input_flag_must_be_bool(flag: object) -> None:
    with pytest.raises(TypeError):
        StageInput(UserInstruction("a"), flag)  # type: ignore[arg-type]


def test_situation_init_defaults() -> None:
    attributes = {"colors": ["red"]}
    init = SituationInit(attributes)
    assert init.all_task_attributes is attributes
    assert init.memory == {} and init.history == []
    other = SituationInit({})
    assert other.memory is not init.memory and other.history is not init.history


def test_observation_fields() -> None:
    obs = Observation("panda", {"a": [1]}, {"extra": {}}, {"k": 1}, ToolBatchContext())
    assert obs.selected_robot_name == "panda" and obs.add_constants == {"k": 1}
    assert isinstance(Observation("r", {}, {}).tool_batch_context, ToolBatchContext)


def test_pose_vectors() -> None:
    pose = Pose.from_vector([0.1, 0.2, 0.3, 2.0, 0.0, 0.0, 0.0])
    assert pose.p == (0.1, 0.2, 0.3) and pose.q == (1.0, 0.0, 0.0, 0.0)
    assert pose.to_vector() == [0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0]
    assert Pose.from_vector(torch.tensor(pose.to_vector())).p == pytest.approx(pose.p)
    with pytest.raises(ValueError):
        Pose.from_vector([0.0] * 6)


# -- tool execution ------------------------------------------------------------------------------
def test_empty_poses_is_a_bad_call() -> None:
    execution = ToolExecution(poses=[], verifier=None, reason="no target")
    assert execution.failure_flag is ToolErrorFlag.BAD_CALL and execution.has_error()


def test_ok_token_is_a_valid_call() -> None:
    execution = ToolExecution(poses=["OK"], verifier=ok_verifier)
    assert execution.failure_flag is ToolErrorFlag.NONE and not execution.has_error()
    assert execution.must_fail_stage is False


def test_pose_entries() -> None:
    execution = ToolExecution([Pose((0, 0, 0.1)), "OPEN", "CLOSE", "OK"], ok_verifier)
    assert execution.poses[1:] == ["OPEN", "CLOSE", "OK"]
    for bad in ("open", "JUMP", 3, (0, 0, 0)):
        with pytest.raises(ValueError):
            ToolExecution([bad], ok_verifier)


def test_poses_need_a_verifier() -> None:
    with pytest.raises(ValueError):
        ToolExecution(["OK"], None)


def test_fail_clears_and_records() -> None:
    execution = ToolExecution(["OK"], ok_verifier)
    execution.fail("Unknown object.")
    assert execution.poses == [] and execution.verifier is None
    assert execution.reason == "Unknown object."
    assert execution.failure_flag is ToolErrorFlag.BAD_CALL and not execution.must_fail_stage
    execution = ToolExecution(["OK"], ok_verifier)
    execution.fail("Broken.", ToolErrorFlag.PLANNER_ERROR, must_fail_stage=True)
    assert execution.failure_flag is ToolErrorFlag.PLANNER_ERROR and execution.must_fail_stage


def test_execution_defaults() -> None:
    execution = ToolExecution(["OK"], ok_verifier)
    assert execution.reason == "" and execution.robot_idx == 0 and execution.context == {}
    assert execution.compatible_error_supports == [] and execution.execution_group is None
    assert execution.reason_is_public is False and execution.allowed_moving_actors is None
    assert execution.injection_applied is False


def test_execution_copies_context_and_actors() -> None:
    context, actors = {"target": "cube"}, ["cube"]
    execution = ToolExecution(["OK"], ok_verifier, context=context, allowed_moving_actors=actors)
    execution.context["target"] = "other"
    execution.allowed_moving_actors.append("bowl")  # type: ignore[union-attr]
    assert context == {"target": "cube"} and actors == ["cube"]


# -- results, logs, updates -----------------------------------------------------------------------
def test_seed_tool_result_with_env_state_update() -> None:
    result = ToolResult(
        ok=True,
        reason="Machine switched on.",
        state_updates=[EnvStateUpdate(path=("magma_extra_state", "machine_on"), value=True)],
    )
    assert result.ok is True and result.reason == "Machine switched on."
    assert result.state_updates[0].path == ("magma_extra_state", "machine_on")
    assert result.state_updates[0].value is True
    assert result.logs is None and result.context == {}


def test_tool_result_fresh_containers() -> None:
    a, b = ToolResult(ok=True), ToolResult(ok=False)
    a.context["x"] = 1
    a.state_updates.append(EnvStateUpdate(("a",), 1))
    assert b.context == {} and b.state_updates == []


@pytest.mark.parametrize(
    ("ok", "expected"),
    [(True, True), (False, False), (torch.tensor(True), True), (torch.tensor([0]), False),
     (torch.tensor([1.0]), True)],
)
def test_tool_result_ok_normalised(ok: object, expected: bool) -> None:
    assert ToolResult(ok=ok).ok is expected


@pytest.mark.parametrize("ok", [1, 0, "yes", None, torch.tensor([True, False]), torch.tensor([])])
def test_tool_result_ok_rejected(ok: object) -> None:
    with pytest.raises(TypeError):
        ToolResult(ok=ok)


def test_log_actions() -> None:
    assert Log("picked").action is None
    edit = Log(("colors", "red"), action="ADD")
    assert edit.content == ("colors", "red") and edit.function is None and edit.stage_id is None
    assert Log(("colors", "red"), action="REMOVE").action == "REMOVE"
    with pytest.raises(ValueError):
        Log(("colors", "red"), action="SET")
    for content in ("red", ("colors",), ("colors", "red", "x"), (1, "red")):
        with pytest.raises(ValueError):
            Log(content, action="ADD")


def test_env_state_update_path() -> None:
    assert EnvStateUpdate(("actors", "cube"), torch.zeros(13)).path == ("actors", "cube")
    for path in ((), ["actors", "cube"], "actors", ("actors", 3)):
        with pytest.raises(TypeError):
            EnvStateUpdate(path, 1)  # type: ignore[arg-type]


def test_tool_batch_context() -> None:
    context = ToolBatchContext()
    assert context.try_reserve("cells", (0, 1), "robot_a")
    assert context.try_reserve("cells", (0, 1), "robot_a")
    assert not context.try_reserve("cells", (0, 1), "robot_b")
    assert context.try_reserve("other", (0, 1), "robot_b")
    reservations = context.get_reservations("cells")
    reservations[(0, 1)] = "robot_b"
    assert context.get_reservations("cells") == {(0, 1): "robot_a"}
    assert context.get_reservations("unknown") == {}


def test_enums() -> None:
    assert {f.name for f in ToolErrorFlag} == {"NONE", "BAD_CALL", "PLANNER_ERROR", "INJECTION_ERROR"}
    assert (StageSuccess.FINISH, StageSuccess.ONGOING, StageSuccess.FAILED) == (1, 0, -1)
    assert {s.name for s in StageState} == {"OPTIMAL", "ACCEPTABLE", "UNASSESSED", "EXCEEDED"}


def test_verifier_log_is_stamped_by_the_runtime() -> None:
    execution = ToolExecution(["OK"], lambda raw_obs: ToolResult(ok=True, logs=Log("picked")))
    execution.set_execution_info("pick", 3, [])
    result = execution.call_verifier({"extra": {}})
    assert (result.logs.function, result.logs.stage_id) == ("pick", 3)  # type: ignore[union-attr]


def test_tool_result_logs_is_one_log() -> None:
    with pytest.raises(TypeError):
        ToolResult(ok=True, logs=[Log("a")])  # type: ignore[arg-type]
