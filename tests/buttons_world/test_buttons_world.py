"""The buttons world on the real simulator: articulated, spring-returned buttons, a press
detector in extra state, and bit-exact snapshots of slots holding articulations."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.motion import MotionPlan, MotionRunner
from magma_core.simulation.state import clone_state, select_slot, states_equal
from magma_scenarios.buttons.tools import press_trajectory
from magma_scenarios.buttons.world import BUTTONS, ENV_ID, STROKE

pytestmark = pytest.mark.sim

BUTTON_ARTS = [f"button_{b}" for b in BUTTONS]


@pytest.fixture(scope="module")
def sim():
    import magma_scenarios.buttons.env  # noqa: F401  (registers the world)
    from magma_core.simulation.envs import SimBatch

    batch = SimBatch(ENV_ID, 3, seed=0, backend="cpu")
    yield batch
    batch.close()


@pytest.fixture
def fresh(sim):
    sim.reset(seed=0)
    return sim


def _press(sim, slot: int, button: str, poses=None) -> None:
    x, y = (float(v) for v in sim.observe()["extra"][f"button_{button}"][slot, :2])
    plan = MotionPlan(slot, poses or press_trajectory(x, y), 0)
    (result,) = MotionRunner(sim).run([plan]).results
    assert result.ok, result.reason


def test_layout_buttons_are_articulations_with_extra_state(fresh):
    state = fresh.get_state()
    assert set(BUTTON_ARTS) <= set(state["articulations"])
    for name in BUTTON_ARTS:  # root pose + velocities (13) + qpos and qvel of one joint
        assert state["articulations"][name].shape == (3, 15)
    extra = state["magma_extra_state"]
    assert extra["lights"].shape == (3, 4) and extra["lights"].dtype == torch.bool
    assert extra["press_count"].shape == (3, 4) and not extra["press_count"].any()
    assert (extra["press_order"] == -1).all()
    obs = fresh.observe()["extra"]
    assert obs["button_red"].shape == (3, 8)
    assert float(obs["button_red"][0, 7]) == 0.0  # displacement at rest


def test_a_press_goes_down_counts_toggles_and_springs_back(fresh):
    x, y = (float(v) for v in fresh.observe()["extra"]["button_blue"][1, :2])
    _press(fresh, 1, "blue", press_trajectory(x, y)[:3])  # come down and stay
    down = fresh.observe()["extra"]
    assert float(down["button_blue"][1, 7]) < -STROKE / 2
    assert down["press_count"][1].tolist() == [0, 0, 1, 0]
    assert down["lights"][1].tolist() == [False, False, True, False]
    _press(fresh, 1, "blue", press_trajectory(x, y)[3:])  # lift: the spring pushes back
    for _ in range(30):
        fresh.step_physics(_hold(fresh), slots=[1])
    up = fresh.observe()["extra"]
    assert float(up["button_blue"][1, 7]) > -0.002
    assert up["press_count"][1].tolist() == [0, 0, 1, 0]  # one press, counted once
    _press(fresh, 1, "blue")
    again = fresh.observe()["extra"]
    assert again["press_count"][1].tolist() == [0, 0, 2, 0]
    assert not bool(again["lights"][1, 2])  # toggled back off
    assert again["press_order"][1, :3].tolist() == [2, 2, -1]
    # the other slots never moved
    assert not again["press_count"][[0, 2]].any()


def _hold(sim) -> torch.Tensor:
    """Actions holding every slot's arm where it is (pd_joint_pos targets)."""
    qpos = sim.robot_qpos(0)
    return torch.cat([qpos[:, :7], -torch.ones(qpos.shape[0], 1)], dim=1)


def test_save_modify_restore_a_slot_with_articulations_is_bit_exact(fresh):
    x, y = (float(v) for v in fresh.observe()["extra"]["button_green"][2, :2])
    _press(fresh, 2, "green", press_trajectory(x, y)[:3])  # a button held down mid-press
    before = fresh.get_state()
    assert float(before["articulations"]["button_green"][2, 13]) < -STROKE / 2
    snapshot = fresh.save_slot(2)

    # modify: finish the press, press another button, edit state directly
    _press(fresh, 2, "green", press_trajectory(x, y)[3:])
    _press(fresh, 2, "red")
    edited = fresh.get_state()
    edited["articulations"]["button_yellow"][2, 13] = -0.01
    edited["magma_extra_state"]["lights"][2, 3] = True
    fresh.set_state(edited, slots=[2])
    assert not states_equal(fresh.get_state(), before)

    fresh.restore_slot(2, snapshot)
    after = fresh.get_state()
    assert states_equal(after, before)
    for name in BUTTON_ARTS + ["panda"]:
        assert torch.equal(after["articulations"][name], before["articulations"][name])


def test_per_slot_restore_leaves_the_other_slots_alone(fresh):
    _press(fresh, 0, "yellow")
    snap0 = fresh.save_slot(0)
    snap1 = fresh.save_slot(1)
    _press(fresh, 1, "red")
    _press(fresh, 0, "green")
    moved = fresh.get_state()
    fresh.restore_slot(1, snap1)  # slot 1 back; slots 0 and 2 as they were
    now = fresh.get_state()
    assert states_equal(select_slot(now, 1), snap1.state)
    assert states_equal(select_slot(now, 0), select_slot(moved, 0))
    assert states_equal(select_slot(now, 2), select_slot(moved, 2))
    # a snapshot moves to another slot: slot 2 becomes slot 0's earlier state, exactly
    fresh.restore_slot(2, snap0)
    assert states_equal(select_slot(fresh.get_state(), 2), snap0.state)
    assert fresh.observe()["extra"]["press_count"][2].tolist() == [0, 0, 0, 1]


def test_set_state_writes_articulation_rows_of_named_slots_only(fresh):
    before = fresh.get_state()
    other = clone_state(before)
    other["articulations"]["button_red"][:, 13] = -0.015
    fresh.set_state(other, slots=[1])
    after = fresh.get_state()
    assert float(after["articulations"]["button_red"][1, 13]) == pytest.approx(-0.015)
    assert torch.equal(after["articulations"]["button_red"][[0, 2]],
                       before["articulations"]["button_red"][[0, 2]])


def test_a_state_edit_of_a_cap_is_simulated_like_a_press(fresh):
    """An articulation row written into the state (as a transition would) is real: the cap
    held down counts as a press at the next control step, then the spring returns it."""
    state = fresh.get_state()
    state["articulations"]["button_yellow"][0, 13] = -0.9 * STROKE
    fresh.set_state(state, slots=[0])
    fresh.step_physics(_hold(fresh), slots=[0])
    after = fresh.observe()["extra"]
    assert after["press_count"][0].tolist() == [0, 0, 0, 1] and bool(after["lights"][0, 3])
    for _ in range(40):
        fresh.step_physics(_hold(fresh), slots=[0])
    assert float(fresh.observe()["extra"]["button_yellow"][0, 7]) > -0.002
    assert fresh.observe()["extra"]["press_count"][0].tolist() == [0, 0, 0, 1]
