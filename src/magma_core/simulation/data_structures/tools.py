"""Tool-execution primitives: the trajectory a tool asks for, its result, logs, state updates.

A tool returns a ``ToolExecution`` (poses + a verifier); after the motion the engine calls the
verifier on the fresh raw observation, which returns a ``ToolResult``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

import torch

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.enums import ToolErrorFlag
from magma_core.simulation.data_structures.error_support import ToolErrorSupport
from magma_core.simulation.data_structures.jsonable import jsonable
from magma_core.simulation.data_structures.pose import Pose

if TYPE_CHECKING:  # layer 2, named for the annotations only
    from magma_core.simulation.errors.base import BaseError

GRIPPER_TOKENS = ("OPEN", "CLOSE", "OK")
LOG_ACTIONS = ("ADD", "REMOVE")

#: An error name -> its bound arguments (None: bound lazily, on the first hook that needs them).
ErrorArgs: TypeAlias = dict[str, "dict[str, object] | None"]


class ToolBatchContext:
    """Scratch reservations shared by the tool calls of one batch in one slot."""

    def __init__(self) -> None:
        self._store: dict[str, dict[Hashable, object]] = {}

    def try_reserve(self, namespace: str, resource: Hashable, owner: object) -> bool:
        """Reserve ``resource``; True if free or already held by ``owner``, else False."""
        held = self._store.setdefault(namespace, {})
        if resource not in held:
            held[resource] = owner
            return True
        return held[resource] == owner

    def get_reservations(self, namespace: str) -> dict[Hashable, object]:
        """A copy of the reservations in ``namespace``."""
        return dict(self._store.get(namespace, {}))


class Log:
    """A tool's log line; with ``action`` ADD/REMOVE it edits an attribute ``(name, value)``."""

    def __init__(self, content: object, action: str | None = None) -> None:
        if action is not None and action not in LOG_ACTIONS:
            raise ValueError(f"Log action must be None, 'ADD' or 'REMOVE', got {action!r}")
        if action is not None and not (
            isinstance(content, (tuple, list))
            and len(content) == 2
            and isinstance(content[0], str)
        ):
            raise ValueError(
                "A Log with an action needs content=(attribute_name, value), "
                f"got {content!r}"
            )
        self.content: object = (
            tuple(content) if action is not None and isinstance(content, (tuple, list)) else content
        )
        self.action = action
        self.function: str | None = None
        self.stage_id: int | None = None

    def set_fn_and_stage(self, function: str, stage_id: int) -> None:
        self.function = function
        self.stage_id = stage_id

    def is_attribute_edit(self) -> bool:
        return self.action is not None

    def to_dict(self) -> JSONDict:
        return {
            "content": jsonable(self.content),
            "action": self.action,
            "function": self.function,
            "stage_id": self.stage_id,
        }

    def to_string(self) -> str:
        return (
            f"({self.stage_id}) function_name={self.function}, "
            f"content={self.content}, action={self.action}"
        )

    def __repr__(self) -> str:
        return f"Log({self.content!r}, action={self.action!r})"


class EnvStateUpdate:
    """A write of ``value`` into the saved env state at ``path``, for the tool's slot only."""

    def __init__(self, path: tuple[str, ...], value: object) -> None:
        if (
            not isinstance(path, tuple)
            or not path
            or not all(isinstance(part, str) for part in path)
        ):
            raise TypeError(f"EnvStateUpdate.path must be a non-empty tuple of str, got {path!r}")
        self.path = path
        self.value = value

    def __repr__(self) -> str:
        return f"EnvStateUpdate(path={self.path!r}, value={self.value!r})"


@dataclass
class ToolResult:
    """What a verifier observed. ``ok`` is the call's outcome, not the stage's."""

    ok: bool | torch.Tensor
    reason: str = ""
    logs: Log | None = None
    context: dict[str, object] | None = field(default=None)
    state_updates: list[EnvStateUpdate] | None = field(default=None)

    def __post_init__(self) -> None:
        self.ok = _normalise_ok(self.ok)
        self.context = {} if self.context is None else self.context
        self.state_updates = [] if self.state_updates is None else list(self.state_updates)
        if not isinstance(self.reason, str):
            self.reason = str(self.reason)
        if self.logs is not None and not isinstance(self.logs, Log):
            raise TypeError(f"ToolResult.logs must be one Log or None, got {type(self.logs).__name__}")
        for update in self.state_updates:
            if not isinstance(update, EnvStateUpdate):
                raise TypeError(
                    f"ToolResult.state_updates holds EnvStateUpdate, got {type(update).__name__}"
                )


def _normalise_ok(ok: object) -> bool:
    if isinstance(ok, bool):
        return ok
    if isinstance(ok, torch.Tensor):
        if ok.numel() != 1:
            raise TypeError(f"ToolResult.ok tensor must have one element, got {ok.numel()}")
        return bool(ok.item())
    raise TypeError(f"ToolResult.ok must be a bool or a one-element tensor, got {type(ok).__name__}")


Trajectory = list  # list of Pose | "OPEN" | "CLOSE" | "OK"
Verifier = Callable[[dict], ToolResult]


def _coerce_pose_entry(entry: object) -> Pose | str:
    if isinstance(entry, str):
        if entry in GRIPPER_TOKENS:
            return entry
        raise ValueError(f"Unknown trajectory token {entry!r}; use a Pose or OPEN, CLOSE, OK")
    if isinstance(entry, Pose):
        return entry
    if hasattr(entry, "p") and hasattr(entry, "q"):
        return Pose.from_sapien(entry)
    raise ValueError(
        f"A trajectory entry is a Pose or one of OPEN, CLOSE, OK, got {type(entry).__name__}"
    )


class ToolExecution:
    """A tool's plan: a trajectory and the verifier to run after it.

    ``poses=[]`` is a bad call; ``poses=["OK"]`` is a valid call without motion. Use
    ``fail()`` to reject a call before any motion.
    """

    def __init__(
        self,
        poses: Sequence[object],
        verifier: Verifier | None,
        reason: str = "",
        robot_idx: int = 0,
        context: Mapping[str, object] | None = None,
        compatible_error_supports: Sequence[ToolErrorSupport] | None = None,
        execution_group: Hashable | None = None,
        reason_is_public: bool = False,
        allowed_moving_actors: Sequence[str] | None = None,
    ) -> None:
        if isinstance(poses, (str, bytes)) or not isinstance(poses, Sequence):
            raise ValueError("ToolExecution.poses must be a list of Pose / OPEN / CLOSE / OK")
        self.poses: list[Pose | str] = [_coerce_pose_entry(p) for p in poses]
        if self.poses and verifier is None:
            raise ValueError(
                "A ToolExecution with poses needs a verifier; "
                "a missing verifier is only valid for a failed preparation (use fail())"
            )
        if verifier is not None and not callable(verifier):
            raise ValueError("ToolExecution.verifier must be callable or None")
        self.verifier = verifier
        self.reason = reason
        self.robot_idx = robot_idx
        self.context: dict[str, object] = dict(context) if context else {}
        self.compatible_error_supports: list[ToolErrorSupport] = list(compatible_error_supports or [])
        self.execution_group = execution_group
        self.reason_is_public = reason_is_public
        self.allowed_moving_actors: list[str] | None = (
            None if allowed_moving_actors is None else list(allowed_moving_actors)
        )
        self.failure_flag = ToolErrorFlag.NONE if self.poses else ToolErrorFlag.BAD_CALL
        self.must_fail_stage = False
        self.injection_applied = False
        self.function_name: str | None = None
        self.associated_stage_id: int | None = None
        self.active_errors: list[tuple[BaseError, ToolErrorSupport]] = []

    # -- failure -------------------------------------------------------------------------
    def fail(
        self,
        reason: str,
        failure_flag: ToolErrorFlag = ToolErrorFlag.BAD_CALL,
        must_fail_stage: bool = False,
    ) -> None:
        """Reject the call before motion: clears poses and verifier, records the reason."""
        if not isinstance(failure_flag, ToolErrorFlag) or failure_flag is ToolErrorFlag.NONE:
            raise ValueError("fail() needs a ToolErrorFlag other than NONE")
        self.poses = []
        self.verifier = None
        self.reason = reason
        self.failure_flag = failure_flag
        self.must_fail_stage = bool(must_fail_stage)

    def has_error(self) -> bool:
        return self.failure_flag is not ToolErrorFlag.NONE

    def has_motion(self) -> bool:
        return any(p != "OK" for p in self.poses)

    # -- error hooks ---------------------------------------------------------------------
    def set_execution_info(self, function_name: str, stage_id: int, active_errors: Sequence[BaseError]) -> None:
        """Stamp name and stage; keep each active error this tool supports with its support."""
        self.function_name = function_name
        self.associated_stage_id = stage_id
        self.active_errors = []
        for error in active_errors:
            for support in self.compatible_error_supports:
                if isinstance(error, support.error_type):
                    self.active_errors.append((error, support))
                    break

    def apply_pre_exec_errors(self, error_args: ErrorArgs) -> None:
        """Run the pre-execution hooks of the matched errors in order, until the call fails.

        ``error_args`` maps an error name to its bound arguments (None = bind lazily).
        """
        for error, support in self.active_errors:
            if self.has_error():
                break
            name = error.get_name()
            if not support.pre or name not in error_args:
                continue
            args = error_args[name]
            if args is None:
                args = error_args[name] = {}
            applied = error.apply_pre_exec(self, args)
            if applied or (applied is None and self.has_error()):
                self.injection_applied = True

    def apply_post_verif_errors(self, result: ToolResult, error_args: ErrorArgs) -> None:
        """Run the post-verification hooks of the matched errors; they may edit ``result``."""
        for error, support in self.active_errors:
            name = error.get_name()
            if not support.post or name not in error_args:
                continue
            args = error_args[name]
            if args is None:
                args = error_args[name] = {}
            before = (result.ok, result.reason)
            applied = error.apply_post_verif(result, args)
            if applied or (applied is None and (result.ok, result.reason) != before):
                self.injection_applied = True

    def call_verifier(self, raw_obs: dict, error_args: ErrorArgs | None = None) -> ToolResult:
        """Run the verifier on the batched raw observation, stamp its log, apply post hooks."""
        if self.verifier is None:
            raise ValueError("This ToolExecution has no verifier")
        result = self.verifier(raw_obs)
        if not isinstance(result, ToolResult):
            raise TypeError(
                f"Verifier of {self.function_name or 'tool'} returned "
                f"{type(result).__name__}, expected ToolResult"
            )
        if result.logs is not None:
            result.logs.set_fn_and_stage(self.function_name or "", self.associated_stage_id or 0)
        self.apply_post_verif_errors(result, error_args if error_args is not None else {})
        return result

    def get_error_description(self, error_args: ErrorArgs) -> str:
        parts = []
        for error, _ in self.active_errors:
            name = error.get_name()
            if name in error_args:
                text = error.get_description(error_args[name])
                if text:
                    parts.append(text)
        return " | ".join(parts)

    def __repr__(self) -> str:
        return (
            f"ToolExecution({self.function_name or '?'}, poses={len(self.poses)}, "
            f"flag={self.failure_flag.value}, reason={self.reason!r})"
        )
