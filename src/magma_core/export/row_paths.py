"""The paths chat rows are made of, each with the steps whose assistant turn is masked.

- Every maximal path of kept candidates (:meth:`ExportForest.kept_paths`).
- Per validated coaching repair, the path through it (:meth:`ExportForest.path_through`),
  also when the failed decision above it was not kept. A coach's *recovery* is executed after
  the failed decision's report, so its path already reads mistake → report → fix.
- Per validated *fixed* repair (the coach's decision in place of the mistake, executed from the
  situation's snapshot), the mistake row (:func:`mistake_path`): the path to the situation, the
  wrong decision, the report the environment sent the agent after it, then the repair and what
  grew from it. Only where that is a conversation the agent could have had: the wrong decision
  changed nothing in the world (none of its calls succeeded: the calls were refused, or there
  were none) and the agent was told so (its branch went on, so the report exists as it was
  sent), and no coach's recovery after that report exists (its row is the real one). A mistake
  that ended the episode (a FAILED stage, an exceeded budget) was never reported to the agent,
  and one that changed the world (a cube picked or placed wrongly) makes the repair, executed
  in the world before it, a conversation no run could have: both keep only the repaired path.

The repaired path (the coach's decision in place of the mistake) is exported as well: it is a
validated execution from the situation as it really was, often the only right decision there
when every sampled one was wrong; its ``origin`` is ``coached``, its kind (by what it holds)
usually ``clean`` (see :mod:`.kinds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from magma_core.export.kinds import AGENT, Step, masked_steps

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.rows import Candidate, ExportForest


@dataclass(frozen=True)
class RowPath:
    """One chat row's steps; ``key`` is its id (the last candidate's key, and for a mistake row
    ``END@MISTAKE``); ``masked`` the positions whose assistant turn gets ``"weight": 0``."""

    key: str
    steps: list[Step]
    masked: frozenset[int]


def row_paths(forest: ExportForest, kept: set[str]) -> list[RowPath]:
    """The rows' paths, in a defined order: kept paths, repairs' paths, mistake rows."""
    faulty = {c.repairs for c in forest.candidates.values() if c.repairs}
    paths = list(forest.kept_paths(kept))
    ends = {p[-1][1].key for p in paths}
    chosen = sorted({a for a, _ in forest.repairs})
    for key in chosen:
        path = forest.path_through(key, kept)
        if path[-1][1].key not in ends:
            ends.add(path[-1][1].key)
            paths.append(path)
    out = [RowPath(p[-1][1].key, p, masked_steps(p, faulty)) for p in paths]
    children = forest.children()
    for key in chosen:
        path = mistake_path(forest, key, kept, children)
        if path is not None:
            mistake = forest.candidates[key].repairs
            out.append(RowPath(f"{path[-1][1].key}@{mistake}", path, masked_steps(path, faulty)))
    return out


def mistake_path(forest: ExportForest, chosen: str, kept: set[str],
                 children: dict[str, list[Candidate]] | None = None) -> list[Step] | None:
    """The mistake row of the fixed repair ``chosen`` (see the module), or None where there is
    none to tell; ``children`` is ``forest.children()`` when the caller has it."""
    fix = forest.candidates[chosen]
    mistake = forest.candidates.get(fix.repairs or "")
    if fix.origin != "coached" or mistake is None or mistake.situation != fix.situation:
        return None
    if mistake.decision is None or mistake.failure != AGENT or mistake.ok_calls:
        return None
    report = forest.situations.get(mistake.next_situation or "")
    if report is None:
        return None
    if any(c.origin == "recovery" and c.repairs == mistake.key
           for c in (children if children is not None else forest.children()).get(report.key, [])):
        return None
    through = forest.path_through(chosen, kept)
    at = next(n for n, (_, c) in enumerate(through) if c.key == chosen)
    return [*through[:at], (through[at][0], mistake), (report, fix), *through[at + 1:]]
