"""gen says, before any tree grows, when its node budget cannot reach a task's last stage
(breadth-first growth: the estimate matches measured thresholds exactly)."""

from __future__ import annotations

import pytest

from magma_core.gen.budget_check import (
    budget_warning,
    nodes_to_first_finish,
    stage_ends,
    trace_decisions,
)
from magma_core.scenarios import load_preset


@pytest.mark.parametrize(("preset", "trees", "first_success"), [
    ("cube.PickPlace", 1, 8), ("cube.PickPlace", 2, 14), ("sorting.SortAll", 1, 92)])
def test_the_estimate_is_the_measured_threshold(preset, trees, first_success):
    """Measured with the trace agent, B=2, K=10: one node fewer gives 0 successes
    (cube.PickPlace: 6 -> 0, 8 -> 2; two trees 12 -> 0, 16 -> 4; sorting.SortAll 90 -> 0, 92 -> 2)."""
    task = load_preset(preset)()
    decisions = trace_decisions(task)
    assert nodes_to_first_finish(decisions, 2, 10, trees, stage_ends(task, decisions)) == first_success
    assert budget_warning(task, 2, 10, first_success, trees) is None
    warning = budget_warning(task, 2, 10, first_success - 1, trees)
    assert warning and f"raise --max-nodes to {first_success}" in warning


def test_the_guides_max_nodes_40_on_a_longer_task_is_warned_before_growing(tmp_path):
    from magma_core.gen import GenSpec, generate

    events = []
    result = generate(GenSpec("sorting.SortAll", agent="trace", max_nodes=40, out=tmp_path, name="g"),
                      lambda event, subject, payload: events.append((event, payload)))
    warnings = [p for e, p in events if e == "warning"]
    assert result.counts["successes"] == 0  # what the user saw, now with the reason first
    assert len(warnings) == 1 and "--max-nodes 40 is unlikely to reach the last stage" in warnings[0]
    assert events[0][0] == "warning"  # before the first tree grows
