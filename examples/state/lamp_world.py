"""A small world of our own, ``DocsLamp-v1``: a Panda, a cube and a lamp that is on or off.

It shows two of the mechanisms that change or keep world state:

* the cube's **initial placement** comes from the episode initialisation, drawn with the
  episode's seeded random generator (same seed, same placement);
* the lamp is **hidden state** (not a physical body): the extra-state hooks put it in every
  snapshot, so saving, restoring and replaying a slot keep it.

Importing this module registers the world with ManiSkill.
"""

from __future__ import annotations

import numpy as np
import torch
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.pose import Pose

from magma_core.simulation.envs import DefaultEnv

ENV_ID = "DocsLamp-v1"
CUBE_HALF_SIZE = 0.02


# --8<-- [start:world]
@register_env(ENV_ID, max_episode_steps=None)
class LampWorld(DefaultEnv):
    """A cube placed at random near (0, -0.1), a zone, and a lamp (``lamp_on``, [N] bool)."""

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the table and the ground
        self.cube = self.build_box("cube", CUBE_HALF_SIZE, (0.85, 0.15, 0.1, 1.0))
        self.zone = self.build_zone("zone", center_xy=(0.0, 0.15))
        self.lamp_on = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)

    # --8<-- [start:placement]
    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)  # the table and the robot at rest
        with torch.device(self.device):
            n = len(env_idx)
            rng = self._batched_episode_rng[env_idx]  # one seeded generator per env
            offset = np.asarray(rng.uniform(-0.03, 0.03, 2)).reshape(n, 2)
            xyz = torch.zeros((n, 3))
            xyz[:, 0] = torch.as_tensor(offset[:, 0], dtype=torch.float32)
            xyz[:, 1] = -0.1 + torch.as_tensor(offset[:, 1], dtype=torch.float32)
            xyz[:, 2] = CUBE_HALF_SIZE
            self.cube.set_pose(Pose.create_from_pq(xyz))
            self.lamp_on[env_idx] = False
    # --8<-- [end:placement]

    # --8<-- [start:hooks]
    def get_magma_extra_state(self) -> dict:
        return {"lamp_on": self.lamp_on.clone()}

    def set_magma_extra_state(self, state: dict) -> None:
        self.lamp_on = state["lamp_on"].clone().to(self.device)
    # --8<-- [end:hooks]
# --8<-- [end:world]
