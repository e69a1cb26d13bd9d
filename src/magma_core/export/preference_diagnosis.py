"""Why a preference export has no pairs, in one line.

A pair needs two sibling candidates (one situation) with *different* decisions, the chosen one
kept, and the chosen one scoring more than ``preference_margin`` above the rejected one. Scores
count optimal stage ends below a candidate (:mod:`magma_core.store.scores`), so a mistake the
branch recovers from (the noisy-trace agent's ``message`` or ``repeat``) scores what the right
decision scores: such siblings tie and make no pair. A small tree grown with little noise often
has no sibling that failed; the line says which of these held and what to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from magma_core.export.rows import ExportForest

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.settings import ExportSettings


def why_no_pairs(forest: ExportForest, settings: ExportSettings) -> str:
    """One line: the situations with two or more usable candidates, those among them with
    different decisions, the largest score gap between such siblings, and what to change."""
    kept, scores = forest.selected(settings.min_score)
    branching = differing = 0
    best_gap, where = 0.0, ""
    for situation, candidates in sorted(forest.children().items()):
        usable = [c for c in candidates if c.decision is not None]
        if len(usable) < 2:
            continue
        branching += 1
        pairs = [(a, b) for a in usable for b in usable
                 if a.decision != b.decision and (a.key in kept)]
        if not pairs:
            continue
        differing += 1
        for a, b in pairs:
            gap = scores[a.key] - scores[b.key]
            if gap > best_gap or not where:
                best_gap, where = gap, situation
    margin = settings.preference_margin
    situations = len(forest.situations)
    if branching == 0:
        return (f"no preference pairs: none of the {situations} situations has two usable candidates "
                "(grow with --branches 2 or more)")
    if differing == 0:
        return (f"no preference pairs: {branching} of {situations} situations have several usable "
                "candidates but all of them made the same decision (more noise, e.g. --agent "
                "noisy-trace:0.5, or sampling for a model agent, gives different siblings)")
    return (f"no preference pairs: {differing} of {situations} situations have siblings with different "
            f"decisions, but no chosen one scores more than the margin {margin:g} above its sibling "
            f"(largest gap {best_gap:.3f}, at {where}): the mistakes were recovered from, so both "
            "siblings reach the same optimal ends; grow more (--max-nodes), with more noise "
            "(--agent noisy-trace:0.5), or lower --preference-margin")
