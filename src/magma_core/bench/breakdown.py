"""Where a benchmark run's trials succeed and fail: per item, per stage, per failure reason.

- ``by_item``: each item's success over its trials, its verdicts by trial index (None for a
  trial not stored yet), mean fraction of stages passed and its terminal statuses;
- ``by_stage``: the funnel by stage index (0 = the first stage of each item, as the engine's
  messages count): trials that reached the stage, trials that passed it, and the failures
  that ended there by reason (trials lost to an outage never ran a stage and are left out);
- ``failure_reasons``: per terminal status other than ``success`` (the report's taxonomy,
  :mod:`magma_core.bench.taxonomy`): trials, share of the failures, items, the stage indices
  they ended at, the episodes' own statuses, and the first trial's reason as an example.

Pure functions of :class:`~magma_core.bench.trial.Trial` lists.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from magma_core.bench.stats import rate
from magma_core.bench.taxonomy import INFRASTRUCTURE_FAILURE
from magma_core.bench.trial import Trial
from magma_core.json_types import JSONDict


def ended_at(t: Trial) -> int:
    """The stage index (0-based) a trial that did not succeed ended at: the first stage it
    did not pass (the last stage when it passed them all)."""
    return max(0, min(t.stages_passed, t.stages_total - 1))


def by_item(trials: list[Trial], trials_per_item: int) -> dict[str, JSONDict]:
    """The per-item table, items in suite order."""
    groups: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        groups[t.item["item_id"]].append(t)
    out = {}
    for item_id, group in groups.items():
        verdicts: list[bool | None] = [None] * max(trials_per_item, 1 + max(t.trial for t in group))
        for t in group:
            verdicts[t.trial] = t.success
        facts = group[0].item
        out[item_id] = {
            "condition": facts.get("condition"), "skeleton_id": facts.get("skeleton_id"),
            "stages": facts.get("stages"),
            "success": rate(sum(t.success for t in group), len(group)),
            "verdicts": verdicts,
            "progression": sum(t.stages_passed / t.stages_total for t in group if t.stages_total) / len(group),
            "statuses": dict(sorted(Counter(t.status for t in group).items())),
        }
    return out


def by_stage(trials: list[Trial]) -> dict[str, JSONDict]:
    """The per-stage funnel, stage indices as strings (``"0"``, ``"1"``, ...)."""
    ran = [t for t in trials if t.status != INFRASTRUCTURE_FAILURE]
    deepest = max((t.stages_total for t in ran), default=0)
    out = {}
    for s in range(deepest):
        reached = [t for t in ran if t.stages_total > s and t.stages_passed >= s]
        passed = sum(1 for t in reached if t.stages_passed > s)
        ended = Counter(t.status for t in reached if not t.success and ended_at(t) == s)
        out[str(s)] = {"reached": len(reached), "passed": rate(passed, len(reached)),
                       "ended_here": dict(sorted(ended.items()))}
    return out


def failure_reasons(trials: list[Trial]) -> dict[str, JSONDict]:
    """The per-failure-reason table, the most frequent reason first."""
    failures = [t for t in trials if not t.success]
    groups: dict[str, list[Trial]] = defaultdict(list)
    for t in failures:
        groups[t.status].append(t)
    out = {}
    for status, group in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ran = [t for t in group if t.status != INFRASTRUCTURE_FAILURE]
        out[status] = {
            "trials": len(group), "share": len(group) / len(failures),
            "items": sorted({t.item["item_id"] for t in group}),
            "at_stage": {str(s): n for s, n in sorted(Counter(ended_at(t) for t in ran).items())},
            "engine_statuses": dict(sorted(Counter(t.engine_status or status for t in group).items())),
            "example": next((t.reason for t in group if t.reason), ""),
        }
    return out


def breakdown(trials: list[Trial], trials_per_item: int) -> JSONDict:
    """The three tables as the report's ``by_item``, ``by_stage`` and ``failure_reasons``."""
    return {"by_item": by_item(trials, trials_per_item), "by_stage": by_stage(trials),
            "failure_reasons": failure_reasons(trials)}
