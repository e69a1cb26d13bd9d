"""An agent's decision as the engine consumes it: a message and/or tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field

from magma_core.json_types import JSONDict


@dataclass
class ToolCall:
    """One tool call aimed at one robot."""

    name: str
    arguments: JSONDict = field(default_factory=dict)
    target_robot_name: str | None = None

    def to_function_string(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.name}({args})"

    def to_dict(self) -> JSONDict:
        return {
            "name": self.name,
            "arguments": dict(self.arguments),
            "target_robot_name": self.target_robot_name,
        }


@dataclass
class RefusedToolCall(ToolCall):
    """A call refused before the engine runs it (e.g. by the public names): the engine
    records it as a failed call with ``reason``, counted like any bad call."""

    reason: str = "The call was refused."


@dataclass
class Decision:
    """What an agent answered for one step: ``say`` text, ``tool_calls``, or both empty."""

    say: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)

    def has_tool_calls(self) -> bool:
        return bool(self.tool_calls)

    def to_dict(self) -> JSONDict:
        return {"say": self.say, "tool_calls": [c.to_dict() for c in self.tool_calls]}


@dataclass
class DecisionError:
    """An agent failed to produce a decision (malformed reply, transport error...).

    Submitted to the engine in place of a ``Decision``: the step is recorded as an agent error
    and nothing is executed.
    """

    code: str
    message: str
    raw: object = None

    def to_dict(self) -> JSONDict:
        return {"code": self.code, "message": self.message}
