"""Scores of a generation tree, as the predecessor keeps them, and the export's selection rule.

A tree alternates situations (one agent input) and candidates (one decision for it). Each
candidate's *result* counts, per stage, the stage ends in its subtree: ``total_child`` (every
stage end and every leaf), ``optimal``, ``non-optimal`` (ACCEPTABLE) and ``unassessed``.
Computed bottom-up:

- a candidate that ends a stage (finished it, failed it, exceeded its budget) adds 1 to its
  own stage, under its end status;
- a leaf (nothing was continued from it) adds 1 to the ``total_child`` of its stage;
- otherwise, and also after a finished stage, a candidate adds up the results of the
  candidates of its next situation.

A candidate's score is Σ over the stages in its result, sorted, at depth d = 1, 2, … of
0.4^d × (optimal + 0.5 × non-optimal) / total_child. Per situation, the export keeps the
candidates within 0.1 of the best, and none when the best is ≤ 0.1.

Pure functions over plain data; the generator, the store and the export share them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Candidate end statuses (the predecessor's StageEndStatus names, lower case).
OPTIMAL = "optimal"
SUBOPTIMAL = "suboptimal"
UNASSESSED = "unassessed"
ERROR = "error"  # the stage failed or exceeded its budget
ONGOING = "ongoing"  # the stage goes on after this candidate
STAGE_ENDS = (OPTIMAL, SUBOPTIMAL, UNASSESSED, ERROR)

DEPTH_DECAY = 0.4
SUBOPTIMAL_WEIGHT = 0.5
KEEP_MARGIN = 0.1
MIN_BEST_SCORE = 0.1

StageCounts = dict[str, int]  # keys: optimal, non-optimal, unassessed, total_child
Result = dict[int, StageCounts]  # stage index -> counts


@dataclass(frozen=True)
class ScoredCandidate:
    """What scoring needs to know of one candidate.

    ``stage``: the stage it was decided in; ``end``: one of ``STAGE_ENDS`` or ``ONGOING``;
    ``next_situation``: the situation its outcome became (None when the branch ended there).
    """

    id: int
    situation: int
    stage: int
    end: str
    next_situation: int | None = None


def empty_counts() -> StageCounts:
    return {"optimal": 0, "non-optimal": 0, "unassessed": 0, "total_child": 0}


def _add(into: Result, other: Mapping[int, Mapping[str, int]]) -> None:
    for stage, counts in other.items():
        target = into.setdefault(stage, empty_counts())
        for key, value in counts.items():
            target[key] += value


def subtree_results(candidates: Iterable[ScoredCandidate]) -> dict[int, Result]:
    """Every candidate's result (candidate id -> stage -> counts), bottom-up, iteratively."""
    nodes = {c.id: c for c in candidates}
    children: dict[int, list[int]] = {}
    for c in nodes.values():
        children.setdefault(c.situation, []).append(c.id)
    results: dict[int, Result] = {}
    # Post-order without recursion: trees can be deep.
    for start in sorted(nodes):
        if start in results:
            continue
        stack = [(start, False)]
        while stack:
            node_id, expanded = stack.pop()
            if node_id in results:
                continue
            node = nodes[node_id]
            below = children.get(node.next_situation, []) if node.next_situation is not None else []
            if not expanded and any(b not in results for b in below):
                stack.append((node_id, True))
                stack.extend((b, False) for b in below if b not in results)
                continue
            result: Result = {}
            if node.end in STAGE_ENDS:
                counts = result.setdefault(node.stage, empty_counts())
                counts["total_child"] += 1
                key = {OPTIMAL: "optimal", SUBOPTIMAL: "non-optimal", UNASSESSED: "unassessed"}
                if node.end in key:
                    counts[key[node.end]] += 1
            elif not below:  # a leaf in the middle of its stage
                result.setdefault(node.stage, empty_counts())["total_child"] += 1
            for b in below:
                _add(result, results[b])
            results[node_id] = result
    return results


def score(result: Mapping[int, Mapping[str, int]]) -> float:
    """Σ over the result's stages, sorted, at depth d = 1, 2, … of
    0.4^d × (optimal + 0.5 × non-optimal) / total_child."""
    total = 0.0
    for depth, stage in enumerate(sorted(result), start=1):
        counts = result[stage]
        if counts.get("total_child", 0) <= 0:
            continue
        good = counts.get("optimal", 0) + SUBOPTIMAL_WEIGHT * counts.get("non-optimal", 0)
        total += DEPTH_DECAY**depth * good / counts["total_child"]
    return total


def select(scores: Mapping[int, float]) -> list[int]:
    """The candidates of one situation to keep, given their scores: those within 0.1 of the
    best, none when the best is ≤ 0.1. Returned in id order."""
    if not scores:
        return []
    best = max(scores.values())
    if best <= MIN_BEST_SCORE:
        return []
    return sorted(c for c, s in scores.items() if s >= best - KEEP_MARGIN - 1e-12)


def results_to_json(result: Mapping[int, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """``{"stage_N": counts}``, the predecessor's on-disk form."""
    return {f"stage_{stage}": dict(counts) for stage, counts in sorted(result.items())}


def results_from_json(data: Mapping[str, Mapping[str, int]]) -> Result:
    return {int(key.removeprefix("stage_")): dict(counts) for key, counts in data.items()}
