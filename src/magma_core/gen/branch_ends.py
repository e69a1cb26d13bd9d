"""How an executed candidate's branch goes on or ends: the generator's verdict on one outcome.

A branch ends at task success, at a failed or exceeded stage, at an invalid answer, and at
``magma run``'s loop limits (:class:`~magma_core.runs.limits.LoopLimits`: decisions in a row
without a tool call on an action stage; the decision cap). A candidate that finishes its stage
ends that stage with the stage's score (``OPTIMAL`` → optimal, ``ACCEPTABLE`` → suboptimal,
otherwise unassessed) and its branch goes on into the next stage while the episode runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from magma_core.runs.limits import NO_ACTION, LoopLimits
from magma_core.simulation.data_structures import StageState, StageSuccess
from magma_core.store import scores as sc

__all__ = ["INVALID", "BranchEnd", "branch_end"]

#: the status, end and episode status of a candidate whose answer could not be executed
INVALID = "invalid"
_END_OF = {
    StageState.OPTIMAL: sc.OPTIMAL,
    StageState.ACCEPTABLE: sc.SUBOPTIMAL,
    StageState.UNASSESSED: sc.UNASSESSED,
}


@dataclass(frozen=True)
class BranchEnd:
    """``end``: the candidate's end status (``ONGOING`` while its stage runs on); ``episode``:
    the episode's status after it (a loop limit's status when one was reached); ``finished``:
    whether it finished its stage; ``limit``: ``(status, reason)`` of a loop limit reached."""

    end: str
    episode: str
    finished: bool
    limit: tuple[str, str] | None

    @property
    def status(self) -> str:
        """The candidate's stored status: its end, or ``finished`` while its stage runs on."""
        return self.end if self.end != sc.ONGOING else "finished"


def branch_end(outcome: Any, episode: str, limits: LoopLimits, idle: int, depth: int) -> BranchEnd:
    """The verdict on a ``StepOutcome`` whose slot's episode is now ``episode``, the branch
    having made ``idle`` decisions in a row without acting and ``depth`` decisions in all."""
    finished = outcome.stage_success is StageSuccess.FINISH
    if finished:
        end = _END_OF.get(outcome.stage_state, sc.UNASSESSED)
    elif outcome.stage_success is StageSuccess.FAILED or episode not in ("running", "success"):
        end = sc.ERROR
    elif outcome.stage_state is StageState.EXCEEDED:
        end = sc.ERROR
    else:
        end = sc.ONGOING
    limit = limits.end_of(idle, depth) if episode == "running" and end == sc.ONGOING else None
    if limit is not None:  # no action: an error end; the decision cap: a finished branch
        episode = limit[0]
        end = sc.ERROR if episode == NO_ACTION else end
    return BranchEnd(end, episode, finished, limit)
