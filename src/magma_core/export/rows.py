"""The typed rows every export reads: a forest of situations and candidate decisions.

Runs and generations both become an :class:`ExportForest`: a run's episode is a tree with one
candidate per situation, a generation's tree has several. The writers never look at the store;
the sources (:mod:`magma_core.export.sources`) never look at a file format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from magma_core.json_types import JSONDict
from magma_core.store import scores as sc


@dataclass(frozen=True)
class Situation:
    """One agent input, exactly as sent (``instruction``, ``tools``, ``attributes``, ``memory``)."""

    key: str
    group: str  # the tree it belongs to: the unit of the train/validation split
    agent_input: JSONDict
    parent: str | None = None  # the candidate that led here


@dataclass(frozen=True)
class Candidate:
    """One decision for a situation. ``decision`` is ``{"say", "tool_calls"}`` for a usable
    candidate (completed by the agent and executed), None otherwise.

    How the environment answered it: ``failure`` (None when nothing failed; see
    :func:`magma_core.export.kinds.failure_of`) and ``ok_calls`` (its calls that succeeded);
    ``final``: the episode succeeded with it (the task is done). ``repairs``: for a coach's
    candidate, the key of the decision the coach diagnosed and repaired (a sibling for a fixed
    decision, the parent step for a recovery)."""

    key: str
    situation: str
    stage: int
    end: str  # one of store.scores.STAGE_ENDS or ONGOING
    decision: JSONDict | None
    next_situation: str | None = None
    origin: str = "model"  # "model", or a coach's: "coached" (a fixed decision), "recovery"
    failure: str | None = None  # None, "agent", "injected" or "system" (kinds.failure_of)
    ok_calls: int = 0
    final: bool = False
    repairs: str | None = None


@dataclass
class ExportForest:
    """Situations and candidates of one or more sources, with the source's settings."""

    situations: dict[str, Situation] = field(default_factory=dict)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    sources: list[JSONDict] = field(default_factory=list)
    #: validated coaching repairs: (chosen coached candidate, rejected failed decision), siblings
    repairs: list[tuple[str, str]] = field(default_factory=list)
    #: the store the forest was read from (exporters that read more of it, e.g. control steps)
    store_path: Path | None = None
    #: group (tree) -> the condition injected into its task (``kinds.CONDITIONS``); clean ones absent
    conditions: dict[str, str] = field(default_factory=dict)

    def children(self) -> dict[str, list[Candidate]]:
        out: dict[str, list[Candidate]] = {}
        for c in self.candidates.values():
            out.setdefault(c.situation, []).append(c)
        return out

    def scores(self) -> dict[str, float]:
        """Every candidate's score (see :mod:`magma_core.store.scores`)."""
        ids = {key: i for i, key in enumerate(sorted(self.candidates))}
        sids = {key: i for i, key in enumerate(sorted(self.situations))}
        scored = [
            sc.ScoredCandidate(ids[c.key], sids[c.situation], c.stage, c.end,
                               sids.get(c.next_situation) if c.next_situation else None)
            for c in self.candidates.values()
        ]
        results = sc.subtree_results(scored)
        back = {i: key for key, i in ids.items()}
        return {back[i]: sc.score(r) for i, r in results.items()}

    def selected(self, min_score: float = sc.MIN_BEST_SCORE) -> tuple[set[str], dict[str, float]]:
        """The kept candidates (the predecessor's rule, ``min_score`` as the floor of the best)
        and every candidate's score."""
        scores = self.scores()
        kept: set[str] = set()
        for situation, candidates in self.children().items():
            usable = {c.key: scores[c.key] for c in candidates if c.decision is not None}
            if not usable or max(usable.values()) <= min_score:
                continue
            best = max(usable.values())
            kept |= {k for k, s in usable.items() if s >= best - sc.KEEP_MARGIN - 1e-12}
            del situation
        return kept, scores

    def path_to(self, situation: str) -> list[tuple[Situation, Candidate]]:
        """The (situation, candidate) steps from the root to ``situation`` (exclusive)."""
        steps: list[tuple[Situation, Candidate]] = []
        node = self.situations[situation]
        while node.parent is not None:
            candidate = self.candidates[node.parent]
            steps.append((self.situations[candidate.situation], candidate))
            node = self.situations[candidate.situation]
        return steps[::-1]

    def path_through(self, candidate: str, kept: set[str]) -> list[tuple[Situation, Candidate]]:
        """The path from the root through ``candidate``, then down its best-keyed kept
        candidates (a validated repair's row, even below a decision that was not kept)."""
        c = self.candidates[candidate]
        path = [*self.path_to(c.situation), (self.situations[c.situation], c)]
        children = self.children()
        while c.next_situation is not None:
            below = sorted((x for x in children.get(c.next_situation, []) if x.key in kept), key=lambda x: x.key)
            if not below:
                break
            c = below[0]
            path.append((self.situations[c.situation], c))
        return path

    def kept_paths(self, kept: set[str]) -> Iterator[list[tuple[Situation, Candidate]]]:
        """Every maximal path of kept candidates from a root: one per kept candidate whose
        next situation has no kept candidate."""
        children = self.children()
        roots = sorted(k for k, s in self.situations.items() if s.parent is None)
        for root in roots:
            stack: list[tuple[str, list[tuple[Situation, Candidate]]]] = [(root, [])]
            while stack:
                sid, path = stack.pop()
                below = sorted((c for c in children.get(sid, []) if c.key in kept), key=lambda c: c.key,
                               reverse=True)
                if not below:
                    if path:
                        yield path
                    continue
                for c in below:
                    stack.append((c.next_situation or "", [*path, (self.situations[sid], c)]))
