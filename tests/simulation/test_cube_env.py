"""The cube world and DefaultEnv on the real simulator."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.sim


def test_registered_on_import():
    import gymnasium as gym

    import magma_scenarios.cube.env  # noqa: F401

    assert "MagmaCube-v1" in gym.registry


def test_world_contents(batch3):
    env = batch3.envs[0]
    assert env.cube.px_body_type == "dynamic"
    for zone in (env.zone_a, env.zone_b):
        assert zone.px_body_type == "kinematic"
        assert not zone._bodies[0].collision_shapes  # visual-only
    assert set(env.observed_actors) == {"cube", "zone_a", "zone_b"}
    state = env.get_state_dict()
    assert state["magma_extra_state"]["machine_on"].shape == (1,)


def test_cube_pose_varies_slightly_with_seed(batch3):
    cubes = batch3.observe()["extra"]["cube"]
    assert not torch.equal(cubes[0], cubes[1])
    assert (cubes[:, :2] - torch.tensor([0.0, -0.1])).abs().max() <= 0.02 + 1e-6
    assert torch.allclose(cubes[:, 2], torch.full((3,), 0.02), atol=1e-4)
    zones = batch3.observe()["extra"]["zone_a"]
    assert torch.equal(zones[0], zones[2])


def test_robot_uids_validation():
    from magma_core.simulation.envs import DefaultEnv

    with pytest.raises(TypeError):
        DefaultEnv(robot_uids=["panda"])


def test_default_env_hooks_default_to_nothing():
    from magma_core.simulation.envs import DefaultEnv
    from magma_core.simulation.envs.headless import backend_kwargs

    env = DefaultEnv(num_envs=1, obs_mode="state_dict", **backend_kwargs())
    try:
        state = env.get_state_dict()
        assert "magma_extra_state" not in state
        assert set(state["actors"]) == {"table-workspace"}
        env.set_state_dict(state)
        assert set(env.get_obs()["extra"]) == {"tcp"}
    finally:
        env.close()


def test_extra_state_leaves_need_the_batch_dimension(batch3, monkeypatch):
    env = batch3.envs[0]
    monkeypatch.setattr(env, "get_magma_extra_state", lambda: {"machine_on": torch.tensor(True)})
    with pytest.raises(ValueError, match="leading batch dimension"):
        env.get_state_dict()
