"""The motion path's direct control step (``envs.direct_drive``) gives the worlds of
ManiSkill's own ``env._step_action``, bit for bit, and steps aside where it does not apply."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.state import states_equal

pytestmark = pytest.mark.sim

REST_ARM = [0.0, 0.3927, 0.0, -1.9635, 0.0, 2.3562, 0.7854]


def _stream(steps: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    arm = torch.tensor(REST_ARM) + 0.2 * torch.randn(steps, 1, 7, generator=gen)
    grip = torch.where(torch.rand(steps, 1, 1, generator=gen) < 0.5, -1.0, 1.0)
    return torch.cat([arm, grip], dim=-1)


def _pair(env_id: str, **options):
    from magma_core.simulation.envs import SimBatch

    return (SimBatch(env_id, 1, seed=0, backend="cpu", env_options=options),
            SimBatch(env_id, 1, seed=0, backend="cpu", env_options=options))


@pytest.mark.parametrize("env_id, robots", [("MagmaCube-v1", None),
                                            ("MagmaSortingDuo-v1", ("panda-0", "panda-1"))])
def test_direct_steps_match_maniskills_own_control_steps(env_id, robots):
    import magma_scenarios.cube.env  # noqa: F401
    import magma_scenarios.sorting.env  # noqa: F401
    from magma_core.simulation.envs.direct_drive import DirectDrive

    direct, wrapped = _pair(env_id)
    try:
        assert DirectDrive.build(direct.envs[0]) is not None
        start = direct.get_state()
        streams = [_stream(60, seed) for seed in range(len(robots or [None]))]
        for k in range(60):
            if robots is None:
                action = streams[0][k]
            else:
                action = {name: stream[k] for name, stream in zip(robots, streams, strict=True)}
            direct.step_physics(action)
            wrapped.envs[0]._step_action(action)
        assert direct._drives[0][1] is not None  # the direct path ran
        state = direct.get_state()
        assert states_equal(state, wrapped.get_state())
        assert not states_equal(state, start)  # the arms moved
        for name in robots or [None]:
            ours, theirs = (batch.robots(0)[name or "panda"] for batch in (direct, wrapped))
            for a, b in zip(ours.robot.get_active_joints(), theirs.robot.get_active_joints(), strict=True):
                assert torch.equal(a.drive_target, b.drive_target)
        # a rebuilt scene gets a drive of its own, and the worlds still match
        direct.reset(seed=3)
        wrapped.reset(seed=3)
        for k in range(20):
            action = streams[0][k] if robots is None else {n: s[k] for n, s in zip(robots, streams, strict=True)}
            direct.step_physics(action)
            wrapped.envs[0]._step_action(action)
        assert direct._drives[0][0] is direct.envs[0].agent
        assert states_equal(direct.get_state(), wrapped.get_state())
    finally:
        direct.close()
        wrapped.close()


def test_nan_actions_are_refused_as_maniskill_refuses_them(batch1):
    action = torch.tensor([[*REST_ARM, 1.0]])
    action[0, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        batch1.step_physics(action)


def test_other_controllers_take_maniskills_path():
    import magma_scenarios.cube.env  # noqa: F401
    from magma_core.simulation.envs import SimBatch
    from magma_core.simulation.envs.direct_drive import DirectDrive

    batch = SimBatch("MagmaCube-v1", 1, seed=0, backend="cpu",
                     env_options={"control_mode": "pd_joint_delta_pos"})
    try:
        assert DirectDrive.build(batch.envs[0]) is None
        before = batch.get_state()["articulations"]["panda"].clone()
        batch.step_physics(torch.tensor([[0.1, 0, 0, 0, 0, 0, 0, 1.0]]))
        assert not torch.equal(batch.get_state()["articulations"]["panda"], before)
    finally:
        batch.close()


def test_a_world_with_its_own_action_step_keeps_it(batch1, monkeypatch):
    from magma_core.simulation.envs.direct_drive import DirectDrive

    env = batch1.envs[0]

    class OwnStep(type(env)):
        def _step_action(self, action):
            return super()._step_action(action)

    monkeypatch.setattr(env, "__class__", OwnStep)
    assert DirectDrive.build(env) is None
