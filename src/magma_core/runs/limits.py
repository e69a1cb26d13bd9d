"""``LoopLimits``: when a driver itself ends an episode or a branch, whatever the engine says.

The run loop (:class:`~magma_core.runs.loop.RunLoop`) and the generator
(:class:`~magma_core.gen.generator.Generator`) share them: :data:`NO_ACTION` after
``max_idle_decisions`` decisions in a row without a tool call on an action stage,
:data:`DECISION_CAP` after ``max_decisions`` decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from magma_core.simulation.executor.records import failed_calls_note

#: Attempts a unit of work gets: a benchmark item against agent outages, a unit handed to
#: Ray actors that died with it.
MAX_ATTEMPTS = 3
NO_ACTION = "no_action"
DECISION_CAP = "decision_cap"
#: The trace agent has no decision left (its error code, and the episode's status): the
#: reference trace ends before the task does. The run loop ends the episode at once.
TRACE_EXHAUSTED = "trace_exhausted"


@dataclass
class LoopLimits:
    """When the loop itself ends an episode."""

    max_idle_decisions: int = 3  # consecutive decisions without a tool call on action stages
    max_decisions: int = 60  # decisions in one episode

    @staticmethod
    def idle_after(idle: int, acted: bool, text_only: bool) -> int:
        """The idle count after a decision: reset by a tool call or on a text-only stage."""
        return 0 if acted or text_only else idle + 1

    def end_of(self, idle: int, decisions: int) -> tuple[str, str] | None:
        """``(status, reason)`` when an episode still running after ``decisions`` decisions,
        ``idle`` of them in a row without a tool call, must end now; else None."""
        if idle >= self.max_idle_decisions:
            return NO_ACTION, f"{idle} consecutive decisions without a tool call on an action stage"
        if decisions >= self.max_decisions:
            return DECISION_CAP, f"reached the cap of {self.max_decisions} decisions"
        return None


def with_failed_calls(reason: str, steps: Iterable[Any], limit: int = 2) -> str:
    """``reason`` followed by the episode's failed tool calls, the first ``limit`` with their
    message (``; failed calls: robot.tool(k=v): MESSAGE; ... (+N more)``), so that an episode
    the loop ends (a trace that ran out, a cap) says what went wrong where people look.
    ``steps`` are the episode record's steps (each with ``calls``)."""
    calls = [c for step in steps for c in getattr(step, "calls", ())]
    return reason + failed_calls_note(calls, limit)
