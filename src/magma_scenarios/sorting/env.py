"""The sorting worlds ``MagmaSorting-v1`` and ``MagmaSortingDuo-v1``; registered on import.

* ``red_cube``, ``green_cube``, ... : the first ``num_cubes`` (3-6, default 4) cubes of
  :data:`~magma_scenarios.sorting.world.COLORS`, dynamic, 4 cm; each starts near its place
  in the layout with a small seeded offset and yaw.
* ``zone_a``, ``zone_b``, ``zone_c``: the first ``num_zones`` (2-3, default 3) flat 12 cm
  squares at fixed places, visual-only (kinematic, no collision).

``num_cubes`` and ``num_zones`` are constructor keyword arguments, so
``gym.make(ENV_ID, num_cubes=6)`` and ``SimBatch(ENV_ID, n, env_options={"num_cubes": 6})``
both work. ``obs["extra"]`` holds every cube's and zone's pose ``[N, 7]`` (xyz + wxyz) and
the TCP poses (``tcp``; with two arms also ``tcp_0`` and ``tcp_1``). The layouts are
described in :mod:`magma_scenarios.sorting.world`.
"""

from __future__ import annotations

import numpy as np
import sapien
import torch
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.actor import Actor
from mani_skill.utils.structs.pose import Pose as MSPose

from magma_core.simulation.envs import DefaultEnv
from magma_scenarios.sorting.world import (
    COLORS,
    CUBE_HALF_SIZE,
    CUBE_JITTER,
    CUBE_YAW_JITTER,
    DEFAULT_NUM_CUBES,
    DEFAULT_NUM_ZONES,
    DUO,
    DUO_ENV_ID,
    ENV_ID,
    SINGLE,
    ZONE_COLORS,
    ZONE_HALF_SIZE,
    Layout,
    check_counts,
    cube_names,
    zone_names,
)

__all__ = ["DUO_ENV_ID", "ENV_ID", "MagmaSortingDuoEnv", "MagmaSortingEnv"]

ZONE_Z = 0.001  # zones lie just above the table top


@register_env(ENV_ID, max_episode_steps=None)
class MagmaSortingEnv(DefaultEnv):
    """One Panda, coloured cubes and zones to sort them into; see the module docstring.

    Args:
        num_cubes: how many cubes (3 to 6), the first of ``red, green, blue, yellow,
            purple, orange``.
        num_zones: how many zones (2 or 3), the first of ``zone_a, zone_b, zone_c``.
        Other arguments go to :class:`~magma_core.simulation.envs.DefaultEnv`.
    """

    #: Where cubes, zones and robots stand.
    layout: Layout = SINGLE

    def __init__(
        self,
        *args: object,
        num_cubes: int = DEFAULT_NUM_CUBES,
        num_zones: int = DEFAULT_NUM_ZONES,
        **kwargs: object,
    ) -> None:
        check_counts(num_cubes, num_zones)
        self.cube_names: list[str] = cube_names(num_cubes)
        """Names of this world's cubes, in colour order."""
        self.zone_names: list[str] = zone_names(num_zones)
        """Names of this world's zones."""
        self.cubes: dict[str, Actor] = {}
        self.zones: dict[str, Actor] = {}
        super().__init__(*args, **kwargs)

    def robot_base_poses(self) -> list[sapien.Pose]:
        """The layout's robot bases (one per robot, in index order)."""
        bases = self.layout.robot_bases
        if len(bases) != len(self.robot_names):
            raise ValueError(
                f"{type(self).__name__} places {len(bases)} robot(s), got {self.robot_names}"
            )
        return [_base_pose(x, y, yaw) for x, y, yaw in bases]

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)
        colors = list(COLORS.values())
        self.cubes = {
            name: self.build_box(
                name, CUBE_HALF_SIZE, colors[i], initial_xy=self.layout.cube_centers[i]
            )
            for i, name in enumerate(self.cube_names)
        }
        self.zones = {
            name: self.build_zone(
                name,
                center_xy=self.layout.zone_centers[name],
                half_size=ZONE_HALF_SIZE,
                color=ZONE_COLORS[name],
            )
            for name in self.zone_names
        }

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)
        with torch.device(self.device):
            b, n = len(env_idx), len(self.cube_names)
            rng = self._batched_episode_rng[env_idx]
            offset = np.asarray(rng.uniform(-CUBE_JITTER, CUBE_JITTER, (n, 2))).reshape(b, n, 2)
            yaw = np.asarray(rng.uniform(-CUBE_YAW_JITTER, CUBE_YAW_JITTER, n)).reshape(b, n)
            offset_t = torch.as_tensor(offset, dtype=torch.float32)
            half_yaw = torch.as_tensor(yaw / 2, dtype=torch.float32)
            for i, cube in enumerate(self.cubes.values()):
                xyz = torch.zeros((b, 3))
                xyz[:, :2] = torch.tensor(self.layout.cube_centers[i]) + offset_t[:, i]
                xyz[:, 2] = CUBE_HALF_SIZE
                h = half_yaw[:, i]
                quat = torch.stack([torch.cos(h), 0 * h, 0 * h, torch.sin(h)], dim=1)
                cube.set_pose(MSPose.create_from_pq(xyz, quat))
            for name, zone in self.zones.items():
                xyz = torch.zeros((b, 3))
                xyz[:, :2] = torch.tensor(self.layout.zone_centers[name])
                xyz[:, 2] = ZONE_Z
                zone.set_pose(MSPose.create_from_pq(xyz))


@register_env(DUO_ENV_ID, max_episode_steps=None)
class MagmaSortingDuoEnv(MagmaSortingEnv):
    """Two Pandas (``panda-0``, ``panda-1``) side by side at the sorting table.

    Each arm reaches the cubes and the zone of its own half, and both reach ``zone_c``
    between them; see :data:`magma_scenarios.sorting.world.DUO`.
    """

    layout = DUO

    def __init__(self, *args: object, robot_uids: tuple[str, ...] = ("panda", "panda"), **kwargs: object):
        super().__init__(*args, robot_uids=robot_uids, **kwargs)


def _base_pose(x: float, y: float, yaw: float) -> sapien.Pose:
    """A base standing at ``(x, y)`` on the table's plane, turned by ``yaw`` about z."""
    return sapien.Pose(p=[x, y, 0.0], q=[float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))])
