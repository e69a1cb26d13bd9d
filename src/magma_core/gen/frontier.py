"""The frontier of a generation: which situations are open, which are asked next, which wait.

A :class:`Situation` is a gen tree's node as the generator holds it: the agent input its
candidates answer, the whole-slot snapshot they resume (``None`` once only the store holds it),
and which candidate indices are stored or asked. The :class:`Frontier` decides the order:

- open situations are asked breadth-first, by (depth, tree, id): ids are given in a fixed
  order (see :mod:`magma_core.gen.generator`'s waves), so the order is a function of the tree;
- a candidate that finishes a stage continues at once only while fewer than K
  (``max_per_stage``) continuations started from that stage's finishers, and only if it
  finished it optimally; the others are *parked* with their rank (optimal, then suboptimal,
  then unassessed) and released, best first and oldest first within a rank, when nothing
  else is left to ask (:meth:`Frontier.release`).

The frontier holds no store and no simulator: the generator writes every status change it
decides (``OPEN`` / ``PARKED``) to the store itself.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.store import scores as sc

__all__ = ["Frontier", "Situation", "rank"]


@dataclass
class Situation:
    """An open situation: its place in the tree, its input and snapshot, its candidates."""

    id: int
    tree: int
    stage: int
    depth: int
    idle: int
    agent_input: dict[str, Any]
    snapshot: SlotSnapshot | None = None
    stored: set[int] = field(default_factory=set)  # candidate indices in the store
    pending: set[int] = field(default_factory=set)  # candidate indices asked, not yet stored
    queued: bool = False  # waiting in the queue to be asked


def rank(end: str | None) -> int:
    """Release order of parked stage finishers: optimal, then suboptimal, then unassessed."""
    return {sc.OPTIMAL: 0, sc.SUBOPTIMAL: 1}.get(end or "", 2)


class Frontier:
    """Open situations, the breadth-first queue, parked finishers and continuation counts."""

    def __init__(self, max_per_stage: int) -> None:
        self.max_per_stage = max_per_stage
        self.open: dict[int, Situation] = {}
        self._queue: list[tuple[int, int, int]] = []  # (depth, tree, id) not yet asked
        self._parked: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (tree, stage) -> (rank, id)
        self._started: dict[tuple[int, int], int] = {}  # (tree, stage) -> continuations started

    def __len__(self) -> int:
        """Situations waiting in the queue to be asked."""
        return len(self._queue)

    def enqueue(self, node: Situation) -> None:
        """Open ``node`` and queue it to be asked."""
        self.open[node.id] = node
        node.queued = True
        heapq.heappush(self._queue, (node.depth, node.tree, node.id))

    def pop(self) -> Situation:
        """The next situation to ask (breadth-first)."""
        _, _, sid = heapq.heappop(self._queue)
        node = self.open[sid]
        node.queued = False
        return node

    def close(self, sid: int) -> None:
        """Forget a situation whose candidates are all stored (its snapshot goes with it)."""
        self.open.pop(sid, None)

    # -- stage finishers -----------------------------------------------------------------------
    def count_started(self, tree: int, stage: int) -> None:
        """A continuation from ``stage``'s finishers started (also: found on resume)."""
        key = (tree, stage)
        self._started[key] = self._started.get(key, 0) + 1

    def admit(self, tree: int, stage: int, end: str) -> bool:
        """Whether a child of a candidate that finished ``stage`` with ``end`` continues now
        (counted as started); if not, the caller parks it with :meth:`park`."""
        if end == sc.OPTIMAL and self._started.get((tree, stage), 0) < self.max_per_stage:
            self.count_started(tree, stage)
            return True
        return False

    def park(self, node: Situation, finished_stage: int, end: str | None) -> None:
        """Hold ``node`` (a stage finisher's child) until :meth:`release` opens it."""
        self.open[node.id] = node
        self._parked.setdefault((node.tree, finished_stage), []).append((rank(end), node.id))

    def release(self) -> list[Situation]:
        """Queue parked finishers, best first, where a stage has fewer than K continuations;
        return them (the caller marks them ``OPEN`` in the store)."""
        released = []
        for key, parked in sorted(self._parked.items()):
            parked.sort()
            while parked and self._started.get(key, 0) < self.max_per_stage:
                _, sid = parked.pop(0)
                self.count_started(*key)
                node = self.open[sid]
                self.enqueue(node)
                released.append(node)
        return released
