"""The kitchen world's behaviour: drawers carry what they hold, closed drawers hide it, a
latched lid stays shut, and the entry transitions edit the state as described."""

from __future__ import annotations

import pytest
import torch

from magma_scenarios.kitchen import places as pl
from magma_scenarios.kitchen import world as w
from magma_scenarios.kitchen.stages import CloseAtEntry, MoveToCounterAtEntry

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def sim():
    import magma_scenarios.kitchen.env  # noqa: F401  (registers the world)
    from magma_core.simulation.envs import SimBatch

    batch = SimBatch(w.ENV_ID, 1, seed=0, backend="cpu")
    yield batch
    batch.close()


def _run(sim, poses):
    from magma_core.simulation.motion import MotionPlan, MotionRunner

    run = MotionRunner(sim).run([MotionPlan(0, poses, 0, None)])
    assert run.failures() == {}
    return sim.observe()["extra"]


def test_a_drawer_opened_by_the_hand_carries_its_content_into_sight(sim):
    from magma_scenarios.kitchen.tools import drawer_path, lid_path

    sim.reset()
    extra = sim.observe()["extra"]
    assert pl.hidden(extra, "red_sponge", 0) and pl.hidden(extra, "green_sponge", 0)
    assert pl.chain(extra, "green_sponge", 0) == ["bowl_b", "drawer_right"]
    before = float(extra["red_sponge"][0, 0])
    extra = _run(sim, drawer_path("drawer_left", 0.0, w.DRAWER_TRAVEL))
    assert pl.is_open(extra, "drawer_left", 0)
    assert float(extra["red_sponge"][0, 0]) < before - 0.9 * w.DRAWER_TRAVEL  # it rode along
    assert not pl.hidden(extra, "red_sponge", 0) and pl.place_of(extra, "red_sponge", 0) == "drawer_left"
    assert pl.hidden(extra, "green_sponge", 0)  # the other drawer is still shut
    extra = _run(sim, drawer_path("drawer_left", w.DRAWER_TRAVEL, 0.0))
    assert pl.is_closed(extra, "drawer_left", 0) and pl.hidden(extra, "red_sponge", 0)
    extra = _run(sim, lid_path(0.0, w.LID_OPEN))
    assert pl.is_open(extra, "box", 0)


def test_a_latched_lid_does_not_follow_the_hand(sim):
    from magma_scenarios.kitchen.tools import lid_path

    sim.reset()
    state = sim.get_state()
    state["magma_extra_state"]["box_latched"][0] = True
    sim.set_state(state)
    extra = _run(sim, lid_path(0.0, w.LID_OPEN))
    assert pl.is_closed(extra, "box", 0)
    assert bool(extra["box_latched"][0])


def test_close_at_entry_pushes_the_tray_and_its_content_back_in():
    q = w.DRAWER_TRAVEL
    sponge = torch.zeros((1, 13))
    sponge[0, :3] = torch.tensor([w.TRAY_CLOSED_X - q - 0.05, w.DRAWER_Y["drawer_left"], 0.025])
    cup = torch.zeros((1, 13))
    cup[0, :3] = torch.tensor([-0.22, 0.27, 0.025])
    state = {
        "actors": {"red_sponge": sponge, "red_cup": cup},
        "articulations": {j: torch.zeros((1, 15)) for j in w.JOINTS},
        "magma_extra_state": {"joint_target": torch.tensor([[q, 0.0, 1.7]]),
                              "box_latched": torch.zeros(1, dtype=torch.bool)},
    }
    state["articulations"]["drawer_left"][0, 13] = q
    state["articulations"]["box"][0, 13] = 1.7
    CloseAtEntry("drawer_left").apply(state, torch.tensor([0]))
    assert float(state["articulations"]["drawer_left"][0, 13]) == 0.0
    assert float(state["magma_extra_state"]["joint_target"][0, 0]) == 0.0
    assert float(sponge[0, 0]) == pytest.approx(w.TRAY_CLOSED_X - 0.05)
    assert float(cup[0, 0]) == pytest.approx(-0.22)  # not in the drawer: untouched
    CloseAtEntry("box", latch=True).apply(state, torch.tensor([0]))
    assert bool(state["magma_extra_state"]["box_latched"][0])
    MoveToCounterAtEntry("red_sponge", 5).apply(state, torch.tensor([0]))
    assert [round(float(v), 3) for v in sponge[0, :2]] == list(w.COUNTER_SPOTS[5])
    with pytest.raises(ValueError, match="unknown target"):
        CloseAtEntry("fridge")
