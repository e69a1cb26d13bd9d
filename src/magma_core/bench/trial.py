"""``Trial``: one stored trial of one benchmark item, as the report reads it (what
:func:`magma_core.bench.metrics.collect` makes and every table of the report is computed from)."""

from __future__ import annotations

from dataclasses import dataclass

from magma_core.json_types import JSONDict


@dataclass(frozen=True)
class Trial:
    """One trial of one item, with the item's facts."""

    item: JSONDict  # item_facts: item_id, condition, control, track, length_bucket, lags, stages
    trial: int
    status: str  # on the report's taxonomy (magma_core.bench.taxonomy)
    stages_passed: int = 0
    stages_total: int = 0
    tokens: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    engine_status: str = ""  # the episode's own status (``exceeded``, ``trace_exhausted``, ...)
    reason: str = ""  # why an episode that did not succeed ended (the record's reason)

    @property
    def success(self) -> bool:
        return self.status == "success"
