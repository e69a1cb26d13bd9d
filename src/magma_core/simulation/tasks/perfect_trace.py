"""A task's reference interaction: the user's inputs, the tool calls and messages that solve it.

The trace agent replays ``PerfectTrace.decisions()`` one by one; tests use it as the oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict, JSONValue
from magma_core.simulation.data_structures.decisions import Decision, ToolCall
from magma_core.simulation.data_structures.instructions import UserInstruction

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.stage import BaseTaskStage


def _identity(kind: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{kind} needs a non-empty identity, got {value!r}")
    return value


@dataclass(frozen=True)
class RuleRef:
    """A reference to a rule the trace follows (the predecessor's ``RuleRef``)."""

    id: str

    def __post_init__(self) -> None:
        _identity("RuleRef", self.id)


@dataclass(frozen=True)
class GoalRef:
    """A reference to a stage goal the trace reaches."""

    id: str

    def __post_init__(self) -> None:
        _identity("GoalRef", self.id)


@dataclass(frozen=True)
class TodoRef:
    """A reference to a to-do item a decision completes (``completed_todos``)."""

    id: str

    def __post_init__(self) -> None:
        _identity("TodoRef", self.id)


@dataclass
class UserEvent:
    """Something the user (or the stage input) said; not a decision."""

    content: str


@dataclass
class ToolCallEvent:
    """One decision made of tool calls (all robots together); ``completed_todos``: the
    to-do items it completes."""

    calls: list[ToolCall]
    completed_todos: list[TodoRef] | None = None


MESSAGE_MODES = ("inform", "execution_report")


@dataclass
class MessageEvent:
    """One decision that only says something; ``mode``: ``inform`` (an answer) or
    ``execution_report`` (a report of what was done)."""

    content: str
    mode: str = "inform"
    completed_todos: list[TodoRef] | None = None

    def __post_init__(self) -> None:
        if self.mode not in MESSAGE_MODES:
            raise ValueError(f"MessageEvent mode must be one of {', '.join(MESSAGE_MODES)}, got {self.mode!r}")


@dataclass
class TraceToolResult:
    """What one call of the trace returns: robot, tool, message (non-empty strings) and the
    attribute updates it makes."""

    robot: str
    tool: str
    message: str
    attribute_updates: list[JSONValue] | None = None

    def __post_init__(self) -> None:
        for name in ("robot", "tool", "message"):
            _identity(f"TraceToolResult.{name}", getattr(self, name))


@dataclass
class ToolResultEvent:
    """The results of the previous decision's calls (at least one); not a decision."""

    results: list[TraceToolResult]

    def __post_init__(self) -> None:
        if isinstance(self.results, TraceToolResult):
            self.results = [self.results]
        self.results = list(self.results)
        if not self.results:
            raise ValueError("ToolResultEvent needs at least one TraceToolResult")


TraceEvent = UserEvent | ToolCallEvent | MessageEvent | ToolResultEvent

#: The predecessor's name for a call in a trace (``Call(name, arguments, target_robot_name)``).
Call = ToolCall


@dataclass
class PerfectTrace:
    """An ordered list of events that solves a task optimally. ``nb_decision``: the number
    of decisions the trace counts (default, as the predecessor counts it: one per
    ``ToolCallEvent``, however many calls it holds)."""

    events: list[TraceEvent] = field(default_factory=list)
    nb_decision: int | None = None

    def __post_init__(self) -> None:
        if self.nb_decision is None:
            self.nb_decision = sum(1 for e in self.events if isinstance(e, ToolCallEvent))
        elif isinstance(self.nb_decision, bool) or not isinstance(self.nb_decision, int) \
                or self.nb_decision < 0:
            raise ValueError(f"nb_decision must be an int >= 0, got {self.nb_decision!r}")

    def decisions(self) -> list[Decision]:
        """The agent's side of the trace, one ``Decision`` per tool-call or message event."""
        out: list[Decision] = []
        for event in self.events:
            if isinstance(event, ToolCallEvent):
                out.append(Decision(tool_calls=[ToolCall(c.name, dict(c.arguments), c.target_robot_name) for c in event.calls]))
            elif isinstance(event, MessageEvent):
                out.append(Decision(say=event.content))
        return out

    def to_dict(self) -> JSONDict:
        rows: list[JSONValue] = []
        for event in self.events:
            if isinstance(event, UserEvent):
                rows.append({"type": "user", "content": event.content})
            elif isinstance(event, ToolCallEvent):
                row = {"type": "tool_calls", "calls": [c.to_dict() for c in event.calls]}
                rows.append(_with_todos(row, event.completed_todos))
            elif isinstance(event, ToolResultEvent):
                rows.append({"type": "tool_results", "results": [
                    {"robot": r.robot, "tool": r.tool, "message": r.message,
                     **({"attribute_updates": r.attribute_updates} if r.attribute_updates else {})}
                    for r in event.results]})
            else:
                row = {"type": "message", "content": event.content}
                if event.mode != "inform":
                    row["mode"] = event.mode
                rows.append(_with_todos(row, event.completed_todos))
        out: JSONDict = {"events": rows}
        if self.nb_decision != sum(1 for e in self.events if isinstance(e, ToolCallEvent)):
            out["nb_decision"] = self.nb_decision
        return out

    @classmethod
    def from_dict(cls, data: JSONDict) -> PerfectTrace:
        events: list[TraceEvent] = []
        for row in data.get("events", []):
            kind = row.get("type")
            todos = [TodoRef(str(t)) for t in row["completed_todos"]] if row.get("completed_todos") else None
            if kind == "user":
                events.append(UserEvent(str(row["content"])))
            elif kind == "tool_calls":
                events.append(
                    ToolCallEvent(
                        [
                            ToolCall(c["name"], dict(c.get("arguments", {})), c.get("target_robot_name"))
                            for c in row["calls"]
                        ],
                        todos,
                    )
                )
            elif kind == "tool_results":
                events.append(ToolResultEvent([
                    TraceToolResult(str(r["robot"]), str(r["tool"]), str(r["message"]),
                                    r.get("attribute_updates")) for r in row["results"]]))
            elif kind == "message":
                events.append(MessageEvent(str(row["content"]), str(row.get("mode", "inform")), todos))
            else:
                raise ValueError(f"Unknown trace event type {kind!r}")
        return cls(events, data.get("nb_decision"))


def _with_todos(row: JSONDict, todos: list[TodoRef] | None) -> JSONDict:
    if todos:
        row["completed_todos"] = [t.id if isinstance(t, TodoRef) else str(t) for t in todos]
    return row


def user_event_mismatches(trace: PerfectTrace, stages: Sequence[BaseTaskStage]) -> list[str]:
    """Where the trace's ``UserEvent`` texts differ from the stages' user instructions, in
    order (one line each; empty when they agree). A mismatch does not stop a run (the agent
    never sees the trace's user text) but usually means a stage or the trace was edited
    without the other."""
    said = [e.content for e in trace.events if isinstance(e, UserEvent)]
    asked = [(i, s.stage_input.instruction.content) for i, s in enumerate(stages)
             if isinstance(getattr(getattr(s, "stage_input", None), "instruction", None),
                           UserInstruction)]
    problems = [
        f"UserEvent {k} says {text!r} but stage {index + 1} instructs {wanted!r}"
        for k, (text, (index, wanted)) in enumerate(zip(said, asked, strict=False))
        if text.strip() != wanted.strip()
    ]
    if len(said) != len(asked):
        problems.append(f"the trace has {len(said)} UserEvent(s) for {len(asked)} stage(s) "
                        "with a user instruction")
    return problems
