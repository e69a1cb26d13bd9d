"""Normalising untrusted decisions: anything an agent sends becomes a ``Decision`` or an error.

A malformed decision (not a decision at all) is reported as such; a malformed call inside a
decision becomes a failed call of that batch. Nothing here raises on bad input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import Decision, DecisionError, ToolCall
from magma_core.simulation.data_structures.decisions import RefusedToolCall


@dataclass
class NormalizedCall:
    """A call as the engine runs it; ``error`` is set when the agent's call was malformed."""

    name: str
    arguments: object
    target_robot_name: str | None
    error: str | None = None

    def to_dict(self) -> JSONDict:
        arguments = self.arguments if isinstance(self.arguments, dict) else repr(self.arguments)
        return {"name": self.name, "arguments": arguments, "target_robot_name": self.target_robot_name}


@dataclass
class NormalizedDecision:
    """A decision as the engine runs it; ``error`` is set when it was not a decision at all."""

    say: str = ""
    calls: list[NormalizedCall] = field(default_factory=list)
    error: str | None = None
    raw: object = None

    def to_dict(self) -> JSONDict:
        out: JSONDict = {"say": self.say, "tool_calls": [c.to_dict() for c in self.calls]}
        if self.error is not None:
            out["error"] = self.error
            out["raw"] = _short_repr(self.raw)
        return out


def _short_repr(value: object, limit: int = 2000) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def normalize_call(raw: object) -> NormalizedCall:
    """A ``ToolCall`` (or a mapping with name/arguments/target_robot_name) → ``NormalizedCall``."""
    if isinstance(raw, RefusedToolCall):
        arguments = raw.arguments if isinstance(raw.arguments, dict) else {}
        return NormalizedCall(str(raw.name), dict(arguments), raw.target_robot_name, raw.reason)
    if isinstance(raw, ToolCall):
        name, arguments, robot = raw.name, raw.arguments, raw.target_robot_name
    elif isinstance(raw, Mapping):
        name = raw.get("name")
        arguments = raw.get("arguments", {})
        robot = raw.get("target_robot_name")
    else:
        return NormalizedCall("", None, None, f"A tool call must be a ToolCall, got {_short_repr(raw, 200)}")
    if not isinstance(name, str) or not name.strip():
        return NormalizedCall(
            str(name) if name is not None else "",
            arguments,
            robot if isinstance(robot, str) else None,
            f"A tool call needs a non-empty tool name, got {_short_repr(name, 200)}",
        )
    if robot is not None and not isinstance(robot, str):
        return NormalizedCall(
            name, arguments, None, f"target_robot_name must be a str, got {_short_repr(robot, 200)}"
        )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return NormalizedCall(
            name,
            arguments,
            robot,
            f"Arguments of {name} must be a dict, got {type(arguments).__name__}",
        )
    return NormalizedCall(name, dict(arguments), robot)


def normalize_decision(raw: object) -> NormalizedDecision:
    """A ``Decision`` (or a mapping with say/tool_calls) → ``NormalizedDecision``; never raises.

    A ``DecisionError`` (the agent failed to decide) is kept as an error: nothing runs.
    """
    if isinstance(raw, DecisionError):
        return NormalizedDecision(error=f"the agent gave no decision ({raw.code}): {raw.message}", raw=raw)
    if isinstance(raw, Decision):
        say, calls = raw.say, raw.tool_calls
    elif isinstance(raw, Mapping):
        say, calls = raw.get("say", ""), raw.get("tool_calls", [])
    else:
        return NormalizedDecision(
            error=f"A decision must be a Decision, got {type(raw).__name__}", raw=raw
        )
    if say is None:
        say = ""
    if not isinstance(say, str):
        return NormalizedDecision(
            error=f"Decision.say must be a str, got {type(say).__name__}", raw=raw
        )
    if calls is None:
        calls = []
    if isinstance(calls, (str, bytes, Mapping)) or not hasattr(calls, "__iter__"):
        return NormalizedDecision(
            say=say, error=f"Decision.tool_calls must be a list, got {type(calls).__name__}", raw=raw
        )
    return NormalizedDecision(say=say, calls=[normalize_call(c) for c in calls], raw=raw)
