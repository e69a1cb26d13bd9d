"""The cube scenario's environment transitions (seed 001's ``MoveCubeAtEntry`` verbatim) and
injected errors, for the engine tests (:mod:`engine.scenario` uses and re-exports them)."""

from __future__ import annotations

from typing import Any

import torch

from magma_core.simulation.data_structures import Observation, ToolExecution, ToolResult
from magma_core.simulation.errors import BaseError
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition


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


class MoveCubeReturningCopy(BaseStageEnvironmentTransition):
    """Returns a new dict instead of editing in place: the engine must use the return value."""

    def __init__(self, y: float) -> None:
        self.y = y

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        actors = {k: v.clone() for k, v in env_state["actors"].items()}
        actors["cube"][env_ids, 1] = self.y
        return {**env_state, "actors": actors}

    def _to_spec_arguments(self) -> dict:
        return {"y": self.y}


class BrokenTransition(BaseStageEnvironmentTransition):
    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        raise RuntimeError("the transition broke")

    def _to_spec_arguments(self) -> dict:
        return {}


# -- errors ------------------------------------------------------------------------------------
class GripperJam(BaseError):
    """Fails a pick before motion (an injected failure, forgiven)."""

    def initialize(self, obs: Observation, env_id: int) -> dict[str, Any] | None:
        return None  # bound lazily, at the first compatible call

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        args["jams"] = args.get("jams", 0) + 1
        if args["jams"] > 1:
            return False  # jams only once
        tool_execution.fail("The gripper jammed.")
        return True

    def get_description(self, args: dict | None) -> str:
        return "the gripper may jam"


class SlipAfterPick(BaseError):
    """Turns a successful pick into a failure after verification."""

    def apply_post_verif(self, tool_result: ToolResult, args: dict) -> bool | None:
        tool_result.ok = False
        tool_result.reason = "The cube slipped."
        return True

    def get_description(self, args: dict | None) -> str:
        return "the cube may slip"


class NamedError(BaseError):
    """A do-nothing error with a name of its own, to observe sampling."""

    def __init__(self, name: str = "E") -> None:
        self.name = name

    def get_name(self) -> str:
        return self.name

    def initialize(self, obs: Observation, env_id: int) -> dict[str, Any] | None:
        return {"slot": env_id, "robot": obs.selected_robot_name}
