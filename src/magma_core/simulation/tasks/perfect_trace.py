"""A task's reference interaction: the user's inputs, the tool calls and messages that solve it.

The trace agent replays ``PerfectTrace.decisions()`` one by one; tests use it as the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from magma_core.simulation.data_structures.decisions import Decision, ToolCall
from magma_core.simulation.data_structures.instructions import UserInstruction


@dataclass
class UserEvent:
    """Something the user (or the stage input) said; not a decision."""

    content: str


@dataclass
class ToolCallEvent:
    """One decision made of tool calls (all robots together)."""

    calls: list[ToolCall]


@dataclass
class MessageEvent:
    """One decision that only says something."""

    content: str


TraceEvent = UserEvent | ToolCallEvent | MessageEvent


@dataclass
class PerfectTrace:
    """An ordered list of events that solves a task optimally."""

    events: list[TraceEvent] = field(default_factory=list)

    def decisions(self) -> list[Decision]:
        """The agent's side of the trace, one ``Decision`` per tool-call or message event."""
        out: list[Decision] = []
        for event in self.events:
            if isinstance(event, ToolCallEvent):
                out.append(Decision(tool_calls=[ToolCall(c.name, dict(c.arguments), c.target_robot_name) for c in event.calls]))
            elif isinstance(event, MessageEvent):
                out.append(Decision(say=event.content))
        return out

    def to_dict(self) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        for event in self.events:
            if isinstance(event, UserEvent):
                rows.append({"type": "user", "content": event.content})
            elif isinstance(event, ToolCallEvent):
                rows.append({"type": "tool_calls", "calls": [c.to_dict() for c in event.calls]})
            else:
                rows.append({"type": "message", "content": event.content})
        return {"events": rows}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PerfectTrace:
        events: list[TraceEvent] = []
        for row in data.get("events", []):
            kind = row.get("type")
            if kind == "user":
                events.append(UserEvent(str(row["content"])))
            elif kind == "tool_calls":
                events.append(
                    ToolCallEvent(
                        [
                            ToolCall(c["name"], dict(c.get("arguments", {})), c.get("target_robot_name"))
                            for c in row["calls"]
                        ]
                    )
                )
            elif kind == "message":
                events.append(MessageEvent(str(row["content"])))
            else:
                raise ValueError(f"Unknown trace event type {kind!r}")
        return cls(events)


def user_event_mismatches(trace: PerfectTrace, stages: list[Any]) -> list[str]:
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
