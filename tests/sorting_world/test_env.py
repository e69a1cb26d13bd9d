"""The sorting worlds on the real simulator: registration, contents, options, jitter, reach."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sapien
import torch

from magma_scenarios.common.tabletop import APPROACH_HEIGHT, PLACE_HEIGHT, down_quat
from magma_scenarios.sorting.world import (
    CUBE_HALF_SIZE,
    CUBE_JITTER,
    CUBE_YAW_JITTER,
    DUO,
    DUO_ENV_ID,
    ENV_ID,
    SINGLE,
    ZONE_HALF_SIZE,
    cube_names,
    zone_names,
)

pytestmark = pytest.mark.sim

CUBES6 = cube_names(6)
ZONES3 = zone_names(3)


def _make(env_id: str, **kwargs):
    import gymnasium as gym

    import magma_scenarios.sorting.env  # noqa: F401
    from magma_core.simulation.envs.headless import backend_kwargs

    return gym.make(env_id, obs_mode="state_dict", **backend_kwargs(), **kwargs).unwrapped


def _yaw(quat: torch.Tensor) -> float:
    w, x, y, z = (float(v) for v in quat)
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def test_registered_on_import():
    import gymnasium as gym

    import magma_scenarios.sorting.env  # noqa: F401

    assert {ENV_ID, DUO_ENV_ID} <= set(gym.registry)


def test_world_contents(sorting6):
    env = sorting6.envs[0]
    assert env.cube_names == CUBES6 and env.zone_names == ZONES3
    assert set(env.observed_actors) == {*CUBES6, *ZONES3}
    assert all(env.cubes[name].px_body_type == "dynamic" for name in CUBES6)
    for zone in env.zones.values():
        assert zone.px_body_type == "kinematic"
        assert not zone._bodies[0].collision_shapes  # visual-only
    extra = sorting6.observe()["extra"]
    assert set(extra) == {*CUBES6, *ZONES3, "tcp"}
    assert all(value.shape == (2, 7) for value in extra.values())
    for name in ZONES3:
        assert torch.allclose(extra[name][:, :2], torch.tensor(SINGLE.zone_centers[name]))


def test_defaults_and_options_through_gym_make_and_sim_batch():
    from magma_core.simulation.envs import SimBatch

    env = _make(ENV_ID)
    try:
        assert env.cube_names == cube_names(4) and env.zone_names == ZONES3
        assert env.robot_names == ["panda"]
    finally:
        env.close()
    with SimBatch(ENV_ID, 1, env_options={"num_cubes": 3, "num_zones": 2}, backend="cpu") as b:
        assert set(b.observe()["extra"]) == {*cube_names(3), "zone_a", "zone_b", "tcp"}
    with pytest.raises(ValueError, match="num_cubes"):
        _make(ENV_ID, num_cubes=7)
    with pytest.raises(ValueError, match="num_zones"):
        _make(DUO_ENV_ID, num_zones=1)


def test_seeded_jitter(sorting6):
    first = sorting6.reset(seed=0)["extra"]
    again = sorting6.reset(seed=0)["extra"]
    cubes = torch.stack([first[name] for name in CUBES6], dim=1)  # [slot, cube, 7]
    assert torch.equal(cubes, torch.stack([again[name] for name in CUBES6], dim=1))
    assert not torch.allclose(cubes[0], cubes[1])  # slot 1 has seed 1
    nominal = torch.tensor(SINGLE.cube_centers)
    offsets = cubes[:, :, :2] - nominal
    assert offsets.abs().max() <= CUBE_JITTER + 1e-6
    assert offsets.abs().max() > CUBE_JITTER / 4  # the offsets are not all tiny
    assert torch.allclose(cubes[:, :, 2], torch.full((2, 6), CUBE_HALF_SIZE), atol=1e-4)
    yaws = [_yaw(q) for q in cubes[:, :, 3:].reshape(-1, 4)]
    assert max(abs(y) for y in yaws) <= CUBE_YAW_JITTER + 1e-4
    assert len({round(y, 4) for y in yaws}) == len(yaws)


def test_duo_robots_stand_side_by_side(duo6):
    extra = duo6.reset(seed=0)["extra"]
    assert duo6.robot_names == ["panda-0", "panda-1"]
    assert {*CUBES6, *ZONES3, "tcp", "tcp_0", "tcp_1"} == set(extra)
    for i, (x, y, yaw) in enumerate(DUO.robot_bases):
        base = duo6.robot_base_pose(i)
        assert torch.allclose(base[:, :3], torch.tensor([x, y, 0.0]), atol=1e-5)
        assert all(abs(_yaw(q) - yaw) < 1e-4 for q in base[:, 3:])
    assert torch.equal(extra["tcp"], extra["tcp_0"])
    assert (extra["tcp_0"][:, 1] < -0.2).all() and (extra["tcp_1"][:, 1] > 0.2).all()
    for name in CUBES6:
        offset = extra[name][:, :2] - torch.tensor(DUO.cube_center(name))
        assert offset.abs().max() <= CUBE_JITTER + 1e-6


def _reach(batch, robot: int, xy, z: float) -> bool:
    """Whether ``robot`` has IK solutions for top-down TCP poses at ``(xy, z)`` in every
    grasp yaw ``tabletop`` may ask for ([-45°, 45°])."""
    from magma_core.simulation.motion import ArmKinematics

    name = batch.robot_names[robot]
    kin = ArmKinematics(batch.robots(0)[name])
    raw = batch.robot_base_pose(robot)[0].double().numpy()
    base_inv = sapien.Pose(raw[:3], raw[3:]).inv()
    rest = kin.rest_qpos[kin.layout.arm]
    return all(
        kin.ik(base_inv * sapien.Pose([xy[0], xy[1], z], down_quat(yaw)), rest) is not None
        for yaw in np.linspace(-math.pi / 4, math.pi / 4, 7)
    )


def _targets(layout, cubes, zones) -> list[tuple[float, float]]:
    """Corners of the cubes' jitter squares and the zones' drop spots (``free_spot``'s)."""
    out = []
    for name in cubes:
        cx, cy = layout.cube_center(name)
        out += [(cx + sx * CUBE_JITTER, cy + sy * CUBE_JITTER) for sx in (-1, 1) for sy in (-1, 1)]
    for name in zones:
        zx, zy = layout.zone_centers[name]
        dx, dy = ZONE_HALF_SIZE[0] / 2, ZONE_HALF_SIZE[1] / 2
        out += [(zx, zy)] + [(zx + sx * dx, zy + sy * dy) for sx in (-1, 1) for sy in (-1, 1)]
    return out


def _pushed(point, base_xy, margin: float) -> tuple[float, float]:
    """``point`` moved ``margin`` farther from ``base_xy``."""
    d = np.subtract(point, base_xy)
    return tuple(np.asarray(point) + margin * d / np.linalg.norm(d))


@pytest.mark.parametrize("world", ["single", "duo"])
def test_everything_is_reachable_with_a_margin(world, sorting6, duo6):
    """Every robot has top-down IK solutions, in any grasp yaw, 3 cm beyond each of its
    targets: cube corners of the jitter square (grasp and approach heights) and the drop
    spots of its zones (release and approach heights)."""
    batch, layout = (sorting6, SINGLE) if world == "single" else (duo6, DUO)
    for robot, (bx, by, _) in enumerate(layout.robot_bases):
        cubes = [name for name in CUBES6 if layout.robot_of(name) == robot]
        for point in _targets(layout, cubes, layout.zones_of(robot)):
            far = _pushed(point, (bx, by), 0.03)
            for z in (CUBE_HALF_SIZE, PLACE_HEIGHT, APPROACH_HEIGHT):
                assert _reach(batch, robot, far, z), (world, robot, point, z)


def test_duo_arms_cannot_reach_the_other_half(duo6):
    for name in CUBES6:
        other = 1 - DUO.robot_of(name)
        assert not _reach(duo6, other, DUO.cube_center(name), CUBE_HALF_SIZE), name
    assert not _reach(duo6, 1, DUO.zone_centers["zone_a"], PLACE_HEIGHT)
    assert not _reach(duo6, 0, DUO.zone_centers["zone_b"], PLACE_HEIGHT)
