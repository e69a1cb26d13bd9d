"""Scenario code written from the seed documents; tests import it (specs need importable classes)."""

from __future__ import annotations

from typing import Any

import torch

from magma_core.simulation.data_structures import (
    Log,
    Observation,
    Pose,
    StageInput,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import At
from magma_core.simulation.stage import (
    BaseTaskStage,
    StageErrorParameters,
    StageGlobalParameters,
)
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_core.simulation.tools import BaseToolsAPI, register_tool


# -- seed 001, verbatim ----------------------------------------------------------------------
class MoveCubeAtEntry(BaseStageEnvironmentTransition):
    def __init__(self, x: float) -> None:
        self.x = x

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        actor = env_state["actors"]["cube"]
        indices = env_ids.to(actor.device)
        actor[indices, 0] = self.x
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"x": self.x}


class InheritsSpecArguments(MoveCubeAtEntry):
    """Inherits ``_to_spec_arguments``: not enough to be serialised."""


# -- errors ----------------------------------------------------------------------------------
class FailGrasp(BaseError):
    """Fails the call before motion."""

    def __init__(self, message: str = "The gripper slipped.") -> None:
        self.message = message

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        args["seen"] = args.get("seen", 0) + 1
        tool_execution.fail(self.message)
        return None

    def get_description(self, args: dict | None) -> str:
        return "grasps may fail"


class FlipResult(BaseError):
    """Turns a successful verification into a failure."""

    def apply_post_verif(self, tool_result: ToolResult, args: dict) -> bool | None:
        tool_result.ok = False
        tool_result.reason = "flipped"
        return None


class Noop(BaseError):
    """Does nothing in either hook."""


class NeedsArgument(BaseError):
    def __init__(self, level: int) -> None:
        self.level = level


# -- stages ----------------------------------------------------------------------------------
class PlaceCubeStage(BaseTaskStage):
    """A goal stage with parameters, errors and an entry transition: a round-trip example."""

    target_tool_calls = 2
    max_tool_calls = 5

    def __init__(self, instruction: str, x: float = 0.1, reset_at_end: bool = False) -> None:
        self.instruction = instruction
        self.x = x
        super().__init__(
            goals=[At("cube", "goal_region", thresh=0.05)],
            stage_goal_description="The cube is on the goal region.",
            stage_input=StageInput(UserInstruction(instruction), flag_answer_to_user=True),
            global_parameters=StageGlobalParameters(reset_at_end=reset_at_end),
            error_parameters=StageErrorParameters([FailGrasp("slip")], 0, 1),
            entry_transition=MoveCubeAtEntry(x=x),
        )

    def _to_spec_arguments(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "x": self.x,
            "reset_at_end": self.global_parameters.reset_at_end,
        }


class GenericStage(BaseTaskStage):
    """Budgets and parameters given per instance (for rule tests)."""

    def __init__(
        self,
        target: int | None = 1,
        maximum: int | None = 2,
        goals: list | None = None,
        global_parameters: StageGlobalParameters | None = None,
        error_parameters: StageErrorParameters | None = None,
        entry_transition: BaseStageEnvironmentTransition | None = None,
        instruction: str = "Do it.",
    ) -> None:
        self.target_tool_calls = target
        self.max_tool_calls = maximum
        super().__init__(
            goals=[At("cube", "goal")] if goals is None else goals,
            stage_goal_description="done",
            stage_input=StageInput(UserInstruction(instruction), flag_answer_to_user=False),
            global_parameters=global_parameters,
            error_parameters=error_parameters,
            entry_transition=entry_transition,
        )

    def _to_spec_arguments(self) -> dict[str, Any]:
        return {"target": self.target_tool_calls, "maximum": self.max_tool_calls}


class LogStage(GenericStage):
    """A stage verified on its logs: done once a log says "done", failed on "broken"."""

    def verif_log_completion(self, stage_log: list[Log], full_log: list[Log]) -> int:
        contents = [log.content for log in stage_log]
        if "broken" in contents:
            return -1
        return 1 if "done" in contents else 0


# -- tools -----------------------------------------------------------------------------------
class CubeTools(BaseToolsAPI):
    @register_tool(
        description="Move the gripper above a point.",
        params_spec={
            "x": {"description": "x in metres", "type": float},
            "y": {"description": "y in metres", "type": float},
            "label": {"description": "a note", "type": str},
        },
        optional=["label"],
        errors=[FailGrasp],
        execution_group="arm",
    )
    def move_to(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        self.last_params = params
        return ToolExecution(
            poses=[Pose((params["x"], params["y"], 0.2)), "CLOSE"],
            verifier=lambda raw_obs: ToolResult(ok=True, reason="moved"),
        )

    @register_tool(description="Count cubes.", params_spec={"n": {"description": "how many", "type": int}})
    def count(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return ToolExecution(["OK"], lambda raw_obs: ToolResult(ok=True), execution_group="own")

    @register_tool(description="Look at the table.", is_detection=True)
    def look(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return ToolExecution(
            ["OK"], lambda raw_obs: ToolResult(ok=True), allowed_moving_actors=["cube"]
        )

    @register_tool(description="Reject everything.")
    def refuse(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        execution = ToolExecution(["OK"], lambda raw_obs: ToolResult(ok=True))
        execution.fail("No.", must_fail_stage=True)
        return execution

    def helper(self) -> str:
        return "not a tool"


class MoreCubeTools(CubeTools):
    @register_tool(description="Scan the table.", is_detection=True)
    def scan(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return ToolExecution(["OK"], lambda raw_obs: ToolResult(ok=True))


# -- observations ----------------------------------------------------------------------------
def make_obs(**xy: list[tuple[float, float]]) -> dict:
    """A raw observation whose ``extra`` holds a ``[N, 7]`` pose per named object."""
    extra = {}
    for name, points in xy.items():
        pose = torch.zeros(len(points), 7)
        pose[:, :2] = torch.tensor(points, dtype=torch.float32)
        pose[:, 3] = 1.0
        extra[name] = pose
    return {"extra": extra}
