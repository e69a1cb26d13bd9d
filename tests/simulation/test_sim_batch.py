"""SimBatch on the real simulator (CPU): layout, slots, snapshots, seeds, stepping."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.state import clone_state, states_equal

pytestmark = pytest.mark.sim


def test_layout_and_observation(batch3):
    state = batch3.get_state()
    assert set(state) == {"actors", "articulations", "magma_extra_state"}
    for name in ("cube", "zone_a", "zone_b"):
        assert state["actors"][name].shape == (3, 13)
    assert state["articulations"]["panda"].shape[0] == 3
    assert state["magma_extra_state"]["machine_on"].dtype == torch.bool
    obs = batch3.observe()
    for name in ("cube", "zone_a", "zone_b", "tcp"):
        assert obs["extra"][name].shape == (3, 7)
    assert obs["extra"]["machine_on"].shape == (3,)
    assert torch.equal(obs["extra"]["cube"], state["actors"]["cube"][:, :7])
    assert batch3.robot_names == ["panda"]
    assert batch3.control_mode == "pd_joint_pos"


def test_save_modify_restore_one_slot_exactly(batch3):
    batch3.step(torch.zeros(3, 8))  # some motion so velocities are not all zero
    before = batch3.get_state()
    snapshot = batch3.save_slot(1)

    modified = clone_state(before)
    modified["actors"]["cube"][1, :3] += torch.tensor([0.05, -0.03, 0.1])
    modified["articulations"]["panda"][1, 13:20] += 0.2
    modified["magma_extra_state"]["machine_on"][1] = True
    batch3.set_state(modified, slots=[1])
    changed = batch3.get_state()
    assert not states_equal(changed, before)
    assert bool(changed["magma_extra_state"]["machine_on"][1])
    batch3.step_physics(torch.zeros(3, 8), slots=[1])

    batch3.restore_slot(1, snapshot)
    after = batch3.get_state()
    assert states_equal(after, before)


def test_set_state_touches_only_named_slots(batch3):
    before = batch3.get_state()
    other = clone_state(before)
    other["actors"]["cube"][:, 0] = 0.2
    batch3.set_state(other, slots=[2])
    after = batch3.get_state()
    assert torch.equal(after["actors"]["cube"][:2], before["actors"]["cube"][:2])
    assert float(after["actors"]["cube"][2, 0]) == pytest.approx(0.2)


def test_snapshot_moves_between_slots(batch3):
    snapshot = batch3.save_slot(0)
    batch3.restore_slot(2, snapshot)
    state = batch3.get_state()
    assert torch.equal(state["actors"]["cube"][2], state["actors"]["cube"][0])


def test_move_cube_at_entry_moves_only_that_slot(batch3):
    from magma_core.simulation.stage.environment_transition import (
        BaseStageEnvironmentTransition,
    )

    class MoveCubeAtEntry(BaseStageEnvironmentTransition):  # the seed's example, verbatim
        def __init__(self, x: float) -> None:
            self.x = x

        def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
            actor = env_state["actors"]["cube"]
            indices = env_ids.to(actor.device)
            actor[indices, 0] = self.x
            return env_state

        def _to_spec_arguments(self) -> dict:
            return {"x": self.x}

    before = batch3.get_state()
    state = MoveCubeAtEntry(x=0.1).apply(batch3.get_state(), torch.tensor([1]))
    batch3.set_state(state, slots=[1])
    cubes = batch3.observe()["extra"]["cube"]
    assert float(cubes[1, 0]) == pytest.approx(0.1)
    assert torch.equal(cubes[[0, 2]], before["actors"]["cube"][[0, 2], :7])


def test_reset_seeds(batch3):
    first = batch3.reset(seed=7)["extra"]["cube"]
    again = batch3.reset(seed=[7, 8, 9])["extra"]["cube"]
    assert torch.equal(first, again)  # int seed s gives slot i the seed s + i
    assert not torch.equal(first[0], first[1])
    one = batch3.reset(seed=[7], slots=[2])["extra"]["cube"]
    assert torch.equal(one[2], first[0])
    assert torch.equal(one[:2], first[:2])
    with pytest.raises(ValueError):
        batch3.reset(seed=[1, 2])


def test_step_and_step_physics(batch3):
    obs, reward, terminated, truncated, info = batch3.step(torch.zeros(3, 8))
    assert obs["extra"]["cube"].shape == (3, 7)
    assert reward.shape == terminated.shape == truncated.shape == (3,)
    before = batch3.get_state()
    target = before["articulations"]["panda"][:, 13:21].clone()
    target[:, 0] += 0.3
    for _ in range(3):
        batch3.step_physics(target, slots=[0])
    after = batch3.get_state()
    assert (
        float(after["articulations"]["panda"][0, 13])
        > float(before["articulations"]["panda"][0, 13]) + 0.05
    )
    assert torch.equal(after["articulations"]["panda"][1:], before["articulations"]["panda"][1:])


def test_bad_slots_raise(batch3):
    with pytest.raises(IndexError):
        batch3.save_slot(3)
    with pytest.raises(IndexError):
        batch3.set_state(batch3.get_state(), slots=[-1])


def test_sim_batch_is_the_engines_simulator(batch1):
    from magma_core.simulation.executor import Simulator

    assert isinstance(batch1, Simulator)
    assert list(batch1.robots(0)) == batch1.robot_names
