"""A group's start: the one whole-slot snapshot every rollout of the group restores.

:func:`start_snapshot` makes it for an item: the stored situation's snapshot when the item
starts from one, else the task's first decision with the item's seed, after replaying a stored
start's decisions (:func:`replay`, whose conversation then goes into the start's memory so the
model sees the episode so far). A start that cannot be made is a one-line ``UserError``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from magma_core.rl.chat import ChatSession
from magma_core.rl.tasks import TaskItem
from magma_core.runs.loop import build_input, initial_memory
from magma_core.simulation.data_structures import Decision
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.user_error import UserError


def start_snapshot(executor: PublicVocabularyExecutor, item: TaskItem, slot: int) -> SlotSnapshot:
    """The group start of ``item``, made in ``slot`` (which it leaves in any state)."""
    start = item.start
    if start is not None and start.snapshot is not None:
        try:
            snapshot = executor.snapshot_from_bytes(start.snapshot, item.task, item.randomization)
        except (TypeError, ValueError, KeyError) as exc:
            raise UserError(f"{start.origin}: its snapshot cannot be restored: {exc}") from None
        return dataclasses.replace(snapshot, memory=start.memory) if start.memory else snapshot
    executor.set_vocabulary(slot, item.randomization)
    try:
        executor.reset_slot(slot, item.seed, task=item.task)
    except ValueError as exc:
        raise UserError(f"{item.id}: {exc}") from None
    memory = initial_memory(item.task)
    if item.randomization is not None:
        memory = item.randomization.to_public_value(memory)
    if start is not None:
        memory = replay(executor, slot, item, memory)
    return executor.snapshot(slot, memory)

def replay(executor: PublicVocabularyExecutor, slot: int, item: TaskItem,
       memory: dict[str, Any]) -> dict[str, Any]:
    """Replay a stored start's decisions in ``slot``; the memory then holds the
    conversation they make (so the model sees the episode so far)."""
    start = item.start
    assert start is not None
    session = ChatSession()
    session.open(build_input(slot, executor.agent_view(slot), memory))
    for i, decision in enumerate(start.replay):
        if isinstance(decision, Decision):
            session.absorb(decision)
        outcome = executor.submit({slot: decision})[slot]
        expected = start.expected[i] if i < len(start.expected) else None
        if expected is not None and outcome.status != expected:
            raise UserError(f"{start.origin}: replaying decision {i} gave status {outcome.status!r}, "
                            f"the store has {expected!r}")
        if executor.status(slot) != "running":
            raise UserError(f"{start.origin}: the episode is over after decision {i}: nothing to start from")
        session.next_input(build_input(slot, executor.agent_view(slot), memory))
    history = session.history
    # The last input is asked again when a rollout opens: leave it out of the history.
    while history and history[-1].get("role") != "assistant":
        history = history[:-1]
    return {**memory, "history": history}
