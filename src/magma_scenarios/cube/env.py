"""The cube world ``MagmaCube-v1``: a Panda, a table, a cube and two flat zones.

Registered with ManiSkill and gymnasium when this module is imported.

* ``cube``: dynamic, 4 cm; it starts near ``CUBE_CENTER`` with a small seeded offset and yaw.
* ``zone_a``, ``zone_b``: flat 12 cm squares at fixed places, visual-only (kinematic, no
  collision), so a cube placed on one rests on the table through it.
* ``machine_on``: a boolean ``[N]`` extra-state tensor (false at reset), exported under
  ``magma_extra_state`` and in ``obs["extra"]``; tools switch it with an ``EnvStateUpdate``.

``obs["extra"]`` holds ``cube``, ``zone_a``, ``zone_b`` and ``tcp`` poses ``[N, 7]``
(xyz + wxyz quaternion) and ``machine_on``.
"""

from __future__ import annotations

import numpy as np
import torch
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.pose import Pose as MSPose

from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.envs import DefaultEnv
from magma_scenarios.cube.world import (
    CUBE_CENTER,
    CUBE_HALF_SIZE,
    CUBE_JITTER,
    CUBE_YAW_JITTER,
    ENV_ID,
    ZONE_A_CENTER,
    ZONE_B_CENTER,
    ZONE_HALF_SIZE,
)

__all__ = [
    "CUBE_CENTER",
    "CUBE_HALF_SIZE",
    "ENV_ID",
    "ZONE_A_CENTER",
    "ZONE_B_CENTER",
    "ZONE_HALF_SIZE",
    "MagmaCubeEnv",
]


@register_env(ENV_ID, max_episode_steps=None)
class MagmaCubeEnv(DefaultEnv):
    """A Panda in front of a cube and two zones; see the module docstring."""

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)
        self.cube = self.build_box(
            "cube", CUBE_HALF_SIZE, (0.85, 0.15, 0.1, 1.0), initial_xy=CUBE_CENTER
        )
        self.zone_a = self.build_zone(
            "zone_a", center_xy=ZONE_A_CENTER, half_size=ZONE_HALF_SIZE, color=(0.2, 0.7, 0.2, 1)
        )
        self.zone_b = self.build_zone(
            "zone_b", center_xy=ZONE_B_CENTER, half_size=ZONE_HALF_SIZE, color=(0.2, 0.3, 0.8, 1)
        )
        self.machine_on = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)
        with torch.device(self.device):
            b = len(env_idx)
            rng = self._batched_episode_rng[env_idx]
            offset = np.asarray(rng.uniform(-CUBE_JITTER, CUBE_JITTER, 2)).reshape(b, 2)
            yaw = np.asarray(rng.uniform(-CUBE_YAW_JITTER, CUBE_YAW_JITTER, 1)).reshape(b)
            xyz = torch.zeros((b, 3))
            xyz[:, 0] = CUBE_CENTER[0] + torch.as_tensor(offset[:, 0], dtype=torch.float32)
            xyz[:, 1] = CUBE_CENTER[1] + torch.as_tensor(offset[:, 1], dtype=torch.float32)
            xyz[:, 2] = CUBE_HALF_SIZE
            half = torch.as_tensor(yaw / 2, dtype=torch.float32)
            quat = torch.stack([torch.cos(half), 0 * half, 0 * half, torch.sin(half)], dim=1)
            self.cube.set_pose(MSPose.create_from_pq(xyz, quat))
            self.zone_a.set_pose(MSPose.create_from_pq(_zone_xyz(ZONE_A_CENTER, b)))
            self.zone_b.set_pose(MSPose.create_from_pq(_zone_xyz(ZONE_B_CENTER, b)))
            self.machine_on[env_idx] = False

    def get_magma_extra_state(self) -> StateTree:
        return {"machine_on": self.machine_on.clone()}

    def set_magma_extra_state(self, state: StateTree) -> None:
        self.machine_on = state["machine_on"].clone().to(self.device)


def _zone_xyz(center: tuple[float, float], b: int) -> torch.Tensor:
    xyz = torch.zeros((b, 3))
    xyz[:, 0], xyz[:, 1], xyz[:, 2] = center[0], center[1], 0.001
    return xyz
