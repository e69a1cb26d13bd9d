"""Injected-error templates (the predecessor's names): failures and masked objects.

* ``OneShotToolFailureError(failure_probability, failure_count)``: each call of a supporting
  tool fails before motion with ``failure_probability``, at most ``failure_count`` times per
  stage. The draws are seeded by the slot and the call count, so a replay fails the same way.
* ``GraspFailureError``: abstract; calls whose ``ToolExecution.context[context_key]`` is one
  of the chosen targets fail before motion. Subclasses choose the targets.
* ``RequestedObjectGraspFailureError(objects=None, failure_count=1)``: the named objects (by
  default the first object the agent tries to grasp in the stage) cannot be grasped,
  ``failure_count`` times.
* ``MaskedObjectError(objects)``: perception fails for ``objects``: acting on one is refused
  as not detected, and detection results leave them out.

All failures are injected (``INJECTION_ERROR``): the engine forgives them, up to 3 per stage.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Sequence

from magma_core.simulation.data_structures import (
    Observation,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.errors import BaseError

__all__ = [
    "GraspFailureError",
    "MaskedObjectError",
    "OneShotToolFailureError",
    "RequestedObjectGraspFailureError",
]


def _fail(execution: ToolExecution, reason: str) -> bool:
    execution.fail(reason, failure_flag=ToolErrorFlag.INJECTION_ERROR)
    return True


class OneShotToolFailureError(BaseError):
    """Supporting calls fail with ``failure_probability``, ``failure_count`` times at most."""

    def __init__(self, failure_probability: float = 1.0, failure_count: int = 1) -> None:
        if not 0.0 <= float(failure_probability) <= 1.0:
            raise ValueError("failure_probability must lie in [0, 1]")
        if isinstance(failure_count, bool) or not isinstance(failure_count, int) or failure_count < 0:
            raise ValueError("failure_count must be an int >= 0")
        self.failure_probability = float(failure_probability)
        self.failure_count = failure_count

    def initialize(self, obs: Observation, env_id: int) -> dict[str, object]:
        return {"remaining": self.failure_count, "calls": 0, "seed": int(env_id)}

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict[str, object]) -> bool:
        args.setdefault("remaining", self.failure_count)
        calls = args.get("calls", 0)
        args["calls"] = calls + 1
        if args["remaining"] <= 0:
            return False
        draw = random.Random(f"{args.get('seed', 0)}:{calls}").random()
        if draw >= self.failure_probability:
            return False
        args["remaining"] -= 1
        name = tool_execution.function_name or "tool"
        return _fail(tool_execution, f"The {name} call failed; it may work if you try again.")

    def get_description(self, args: dict[str, object] | None) -> str:
        return "A tool call may fail once; trying again can work."


class GraspFailureError(BaseError):
    """Calls aimed at one of the chosen targets fail before motion (see the module docstring)."""

    #: the ``ToolExecution.context`` key naming what a call acts on
    context_key = "object"

    @abstractmethod
    def choose_targets(self, obs: Observation, env_id: int) -> list[str] | None:
        """The targets for this trajectory (None: bind at the first grasp)."""

    def initialize(self, obs: Observation, env_id: int) -> dict[str, object] | None:
        targets = self.choose_targets(obs, env_id)
        return None if targets is None else {"targets": list(targets)}

    def bind_first(self, target: str) -> list[str]:
        """Targets when none were chosen up front: the first one the agent acts on."""
        return [target]

    def failures_left(self, args: dict[str, object]) -> bool:
        return True

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict[str, object]) -> bool:
        target = (tool_execution.context or {}).get(self.context_key)
        if target is None:
            return False
        if "targets" not in args:
            args["targets"] = self.bind_first(target)
        if target not in args["targets"] or not self.failures_left(args):
            return False
        return _fail(tool_execution, f"The grasp of the {target} failed.")


class RequestedObjectGraspFailureError(GraspFailureError):
    """``objects`` (default: the first object grasped in the stage) cannot be grasped,
    ``failure_count`` times."""

    def __init__(self, objects: Sequence[str] | None = None, failure_count: int = 1) -> None:
        self.objects = None if objects is None else list(objects)
        self.failure_count = failure_count

    def choose_targets(self, obs: Observation, env_id: int) -> list[str] | None:
        return self.objects

    def failures_left(self, args: dict[str, object]) -> bool:
        used = args.get("failures", 0)
        if used >= self.failure_count:
            return False
        args["failures"] = used + 1
        return True

    def get_description(self, args: dict[str, object] | None) -> str:
        return "An object may be impossible to grasp for a while."


class MaskedObjectError(BaseError):
    """``objects`` are not perceived: acting on them fails, detections leave them out."""

    context_key = "object"

    def __init__(self, objects: Sequence[str] = ()) -> None:
        if isinstance(objects, str):
            raise TypeError("MaskedObjectError.objects is a list of names")
        self.objects = list(objects)

    def initialize(self, obs: Observation, env_id: int) -> dict[str, object]:
        return {"masked": list(self.objects)}

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict[str, object]) -> bool:
        target = (tool_execution.context or {}).get(self.context_key)
        if target is None or target not in args.get("masked", self.objects):
            return False
        tool_execution.reason_is_public = True
        return _fail(tool_execution, f"{target} was not detected.")

    def apply_post_verif(self, tool_result: ToolResult, args: dict[str, object]) -> bool:
        masked = args.get("masked", self.objects)
        head, sep, body = tool_result.reason.partition(": ")
        if not sep or not masked:
            return False
        items = body.rstrip(".").split(", ")
        kept = [i for i in items if not any(m in i for m in masked)]
        if len(kept) == len(items):
            return False
        tool_result.reason = f"{head}: {', '.join(kept) or 'nothing'}."
        return True

    def get_description(self, args: dict[str, object] | None) -> str:
        return "Some objects may not be perceived."
