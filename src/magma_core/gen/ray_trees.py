"""``magma gen --ray``: generation trees grown in engine actors on a Ray cluster.

The unit of work is one tree. Each actor builds its generation from the ``GenSpec`` as
``magma gen`` does (:func:`~magma_core.gen.growing.prepare`, one engine of ``slots`` slots) and, for
each tree the driver hands it (:func:`~magma_core.runs.ray_driver.drive_units`), runs the
same :func:`~magma_core.gen.growing.grow_here` as ``magma gen`` for that one tree (seed ``seed + t``, node
budget ``ceil(M / T)``) against a private store on a temporary SQLite file, then sends the
tree's rows back (:class:`~magma_core.gen.entry.TreeWork` places them through
:func:`magma_core.runs.placement.place`). The driver alone writes them into the real store, one tree per transaction,
with fresh ids: a stored tree is finished and skipped on resume; a tree in flight when the
driver dies, or lost with its actor, is grown again.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magma_core.gen.assembly import GenParts
from magma_core.gen.growing import grow_here, prepare
from magma_core.gen.spec import GenSpec
from magma_core.runs.assembly import open_executor
from magma_core.runs.ray_actors import Channel
from magma_core.simulation.executor.engine import Engine
from magma_core.store.generation_store import CandidateRow, GenerationStore, NewSituation

PRIVATE = "tree"  # the generation's name in an actor's private store


def tree_budget(max_nodes: int, trees: int) -> int:
    """Each tree's share of the node budget M with ``--ray``: ceil(M / T)."""
    return -(-max_nodes // trees)


@dataclass(frozen=True)
class GrownTree:
    """One tree's rows as an actor's private store holds them (ids from 0)."""

    seed: int
    tools: list[dict[str, Any]]
    task: str | None
    vocabulary: str | None
    situations: list[NewSituation]
    candidates: list[CandidateRow]


@dataclass(frozen=True)
class TreeJob:
    """An actor's job (see :mod:`magma_core.runs.ray_actors`): grow the trees of ``spec`` it
    is handed. Plain values only: the actor assembles its own generation and engine from them."""

    spec: GenSpec

    def run(self, index: int, units: Iterator[Any], channel: Channel) -> None:
        spec = self.spec
        parts = prepare(spec)
        try:
            executor = open_executor(parts.task, spec.slots, spec.seed, parts.judge, spec.backend,
                                     skills=parts.skills, fresh_scene=spec.fresh_scenes)
            try:
                for tree in units:
                    channel.send(("result", tree, self.grow(parts, executor, tree)))
            finally:
                executor.close()
        finally:
            parts.agent.close()

    def grow(self, parts: GenParts, executor: Engine, tree: int) -> GrownTree:
        """Tree ``tree`` alone, as tree 0 of a one-tree generation in a temporary store."""
        spec = self.spec
        settings = dataclasses.replace(spec.settings(), trees=1, seed=spec.seed + tree,
                                       max_nodes=tree_budget(spec.max_nodes, spec.trees))
        with tempfile.TemporaryDirectory(prefix="magma-gen-tree-") as folder:
            store = GenerationStore(Path(folder) / "tree.db")
            try:
                store.open_generation(PRIVATE, spec.target, {})
                grow_here(parts, executor, store, PRIVATE, settings, spec.pacing)
                return _rows(store)
            finally:
                store.close()


def _rows(store: GenerationStore) -> GrownTree:
    (tree,) = store.trees(PRIVATE)
    situations = [
        NewSituation(s.id, s.tree, s.parent, s.stage, s.depth, s.idle, s.status, s.end_status,
                     s.agent_input, store.snapshot_blob(PRIVATE, s.id))
        for s in store.situations(PRIVATE)
    ]
    situations.sort(key=lambda s: s.id != tree["root"])  # the root first
    return GrownTree(tree["seed"], tree["tools"], tree["task"], tree["vocabulary"], situations,
                     store.candidates(PRIVATE))


def store_tree(store: GenerationStore, name: str, tree: int, grown: GrownTree) -> None:
    """Write ``grown`` as tree ``tree`` of generation ``name``, its ids moved past the stored
    ones (the agent input's ``id`` is its situation's, as in a tree grown here)."""
    first_situation, first_candidate = store.next_ids(name)

    def sid(value: int | None) -> int | None:
        return None if value is None else value + first_situation

    def cid(value: int | None) -> int | None:
        return None if value is None else value + first_candidate

    situations = [
        dataclasses.replace(s, id=sid(s.id), tree=tree, parent=cid(s.parent),
                            agent_input={**s.agent_input, "id": sid(s.id)})
        for s in grown.situations
    ]
    candidates = [
        dataclasses.replace(c, id=cid(c.id), situation=sid(c.situation), tree=tree,
                            next_situation=sid(c.next_situation))
        for c in grown.candidates
    ]
    store.add_grown_tree(name, tree, grown.seed, grown.tools, situations, candidates,
                         task=grown.task, vocabulary=grown.vocabulary)
