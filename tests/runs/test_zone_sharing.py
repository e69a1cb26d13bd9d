"""A second cube placed in a zone lands beside the first one without pushing it."""

from __future__ import annotations

import pytest
import torch

from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_second_cube_does_not_push_the_first(seed):
    task = load_preset("sorting.Interruption")()
    decisions = task.perfect_trace().decisions()
    with Executor(task, num_slots=1, seed=seed) as executor:
        for decision in decisions[:4]:  # red to zone_a, green to zone_b
            executor.submit({0: decision})
        before = executor.sim.observe()["extra"]["red_cube"][0, :3].clone()
        for decision in decisions[4:6]:  # blue to zone_a, beside red
            outcome = executor.submit({0: decision})[0]
            assert all(call.ok for call in outcome.calls), outcome.calls
        extra = executor.sim.observe()["extra"]
    moved = float(torch.linalg.norm(extra["red_cube"][0, :3] - before))
    assert moved < 0.005, f"the red cube was pushed {moved * 100:.1f} cm"
    gap = float(torch.linalg.norm(extra["red_cube"][0, :2] - extra["blue_cube"][0, :2]))
    assert gap > 0.045
