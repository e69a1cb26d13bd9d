"""What a resumed generation finds in the store: its frontier and where its ids go on.

A killed ``magma gen`` loses only what was in flight (each candidate is stored with the
situation it led to in one transaction), so the same call resumes from the store alone: every
situation not closed is open again (queued, or parked if it was parked), with the candidate
indices already stored; the continuations each stage's finishers started are counted again;
new ids go on after the largest stored ones. A situation whose snapshot is not in memory
(parked, resumed, or closed and coached) reads it back with :func:`stored_snapshot`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from magma_core.gen.frontier import Frontier, Situation
from magma_core.store import scores as sc
from magma_core.store.generation_store import CLOSED, PARKED, GenerationStore

__all__ = ["Resumed", "resume", "stored_snapshot"]


@dataclass(frozen=True)
class Resumed:
    """The ids the generation goes on from, and what its budget and counts already hold."""

    next_situation: int
    next_candidate: int
    candidates: int  # stored candidates: they count against the node budget
    successes: int


def resume(store: GenerationStore, name: str, frontier: Frontier,
           bind: Callable[[Situation], None]) -> Resumed:
    """Fill ``frontier`` with generation ``name``'s open and parked situations (``bind`` sees
    each, e.g. to tell a per-tree trace agent its tree) and return where it goes on."""
    situations = store.situations(name)
    candidates = store.candidates(name)
    stored: dict[int, set[int]] = {}
    for c in candidates:
        stored.setdefault(c.situation, set()).add(c.candidate_index)
    parents = {c.id: c for c in candidates}
    for s in situations:
        parent = parents.get(s.parent) if s.parent is not None else None
        if parent is not None and parent.stage != s.stage and s.status != PARKED:
            frontier.count_started(s.tree, parent.stage)
        if s.status == CLOSED:
            continue
        node = Situation(s.id, s.tree, s.stage, s.depth, s.idle, s.agent_input,
                         stored=stored.get(s.id, set()))
        bind(node)
        if s.status == PARKED:
            frontier.park(node, parent.stage if parent else s.stage,
                          parent.end_status if parent else sc.OPTIMAL)
        else:
            frontier.enqueue(node)
    return Resumed(next_situation=max((s.id for s in situations), default=-1) + 1,
                   next_candidate=max((c.id for c in candidates), default=-1) + 1,
                   candidates=len(candidates),
                   successes=sum(c.episode_status == "success" for c in candidates))


def stored_snapshot(store: GenerationStore, name: str, executor: Any, situation: int,
                    tree: Any, randomized: bool) -> Any:
    """Situation ``situation``'s snapshot read back from the store, for its ``tree`` (a
    ``TreeTask``: its task, and its names when the generation is ``randomized``)."""
    blob = store.snapshot_blob(name, situation)
    if blob is None:
        raise RuntimeError(f"situation {situation} of {name!r} has no stored snapshot")
    if randomized:
        return executor.snapshot_from_bytes(blob, tree.task, tree.vocabulary)
    return executor.snapshot_from_bytes(blob, tree.task)

