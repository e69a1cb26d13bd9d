"""One wave of a generation: what an executed candidate leaves behind until its turn to be stored.

The generator asks every queued situation of a wave at once (within the node budget), executes
the answers as they come, up to one per slot, and holds each result as an :class:`Executed`:
the outcome, the branch's verdict, and, while the episode runs on, the child situation's
snapshot and agent input read from the slot right after execution (the slot is then free for
the next candidate). When the whole wave has run, the results are stored in one fixed order,
(situation, candidate index), and only then get their ids: candidate ids, child situation ids,
which finisher continues and which is parked, and what the coach sees all follow that order.

That is what makes a generation a function of its command and seeds: on the CPU simulator a
slot's world never depends on what runs beside it (:mod:`magma_core.simulation.motion`), so
neither the slot count, the agent's answer order nor the machine's load can change a stored
byte. (On the GPU backend the whole batch steps together, so batch composition can matter.)
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from magma_core.gen.branch_ends import BranchEnd, branch_end
from magma_core.gen.frontier import Situation
from magma_core.protocol.agent import AgentOutput
from magma_core.runs.limits import LoopLimits
from magma_core.runs.loop import build_input
from magma_core.simulation.data_structures import DecisionError
from magma_core.simulation.executor.engine import Engine
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.store.generation_store import CandidateRow

__all__ = ["Executed", "candidate_row", "read_slot"]


@dataclass
class Executed:
    """One candidate's result, held until its wave is stored. ``verdict`` is ``None`` for an
    answer that could not be executed; ``child_*`` is set while the episode runs on."""

    situation: int
    output: AgentOutput
    verdict: BranchEnd | None = None
    idle: int = 0
    execution: dict[str, Any] | None = None
    child_stage: int = 0
    child_input: dict[str, Any] | None = None  # its ``id`` is given when it is stored
    child_snapshot: SlotSnapshot | None = None
    control_steps: list[dict[str, Any]] | None = None  # with --record-control (gen.control)

    @property
    def order(self) -> tuple[int, int]:
        """Where it is stored in its wave: by situation, then candidate index."""
        return self.situation, self.output.candidate_index


def read_slot(executor: Engine, slot: int, node: Situation, output: AgentOutput, outcome: Any,
              decision: Any, limits: LoopLimits, text_only: bool, branches: int,
              timings: dict[str, float]) -> Executed:
    """What candidate ``output`` of ``node`` left in ``slot`` after ``executor.submit``: the
    verdict (a loop limit reached ends the slot's episode here), the execution record (a
    scenario error keeps its reason and traceback) and the child's snapshot and input."""
    episode = executor.status(slot)
    acted = not isinstance(decision, DecisionError) and bool(decision.tool_calls)
    idle = limits.idle_after(node.idle, acted, text_only)
    verdict = branch_end(outcome, episode, limits, idle, node.depth + 1)
    if verdict.limit is not None:
        executor.end_episode(slot, *verdict.limit)
    execution = outcome.to_dict()
    execution.pop("next_view", None)
    execution.pop("slot", None)  # where it ran is placement, not outcome: not stored
    if verdict.episode == "error":
        record = executor.record(slot)
        execution.update(reason=record.reason, traceback=record.traceback)
    result = Executed(node.id, output, verdict, idle, execution)
    if verdict.episode == "running":
        start = time.perf_counter()
        result.child_snapshot = executor.snapshot(slot, output.memory)
        timings["snapshot_s"] += time.perf_counter() - start
        result.child_stage = outcome.next_view.stage_index
        result.child_input = build_input(-1, executor.agent_view(slot), output.memory).model_dump()
        result.child_input["num_outputs"] = branches
    return result


def candidate_row(cid: int, node: Situation, output: AgentOutput, payload: dict[str, Any],
                  execution: dict[str, Any] | None, status: str, end: str, episode: str,
                  child: int | None, coaching: dict[str, Any] | None) -> CandidateRow:
    """The stored row of candidate ``cid``: ``output`` of ``node`` and what became of it."""
    return CandidateRow(
        id=cid, situation=node.id, candidate_index=output.candidate_index,
        tree=node.tree, stage=node.stage, response_status=output.status, output=payload,
        memory=copy.deepcopy(output.memory), internal_steps=list(output.internal_steps),
        execution=execution, status=status, end_status=end, episode_status=episode,
        next_situation=child, score=None, coaching=coaching,
    )
