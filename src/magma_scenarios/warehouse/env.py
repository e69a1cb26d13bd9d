"""The warehouse world ``MagmaWarehouse-v1``; registered on import.

Two Pandas (``panda-0``, ``panda-1``), four 4 cm boxes (``red_box``, ``blue_box``,
``green_box``, ``yellow_box``, dynamic) and eight flat 10 cm slots (visual-only); the layout
is in :mod:`magma_scenarios.warehouse.world`. Each box starts in its slot of
:data:`~magma_scenarios.warehouse.world.INITIAL` with a small seeded offset and yaw.

``magma_extra_state``: ``occupant_<slot>`` (int64 ``[N]`` per slot of
:data:`~magma_scenarios.warehouse.world.SLOTS`: the index of its box in
:data:`~magma_scenarios.warehouse.world.BOXES`, or -1), reset to the initial layout.
``obs["extra"]`` holds every box's and slot's pose ``[N, 7]``, the ``occupant_<slot>``
tensors and the TCP poses (``tcp``, ``tcp_0``, ``tcp_1``).
"""

from __future__ import annotations

import numpy as np
import sapien
import torch
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.actor import Actor
from mani_skill.utils.structs.pose import Pose as MSPose

from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.envs import DefaultEnv
from magma_scenarios.warehouse.world import (
    BOX_COLORS,
    BOX_HALF_SIZE,
    BOX_JITTER,
    BOX_YAW_JITTER,
    BOXES,
    ENV_ID,
    INITIAL,
    ROBOT_BASES,
    SLOT_CENTERS,
    SLOT_COLORS,
    SLOT_HALF_SIZE,
    SLOTS,
    box_index,
    slot_index,
)

__all__ = ["ENV_ID", "MagmaWarehouseEnv", "initial_occupant"]

SLOT_Z = 0.001


def initial_occupant() -> list[int]:
    """The ``occupant`` row of the initial layout."""
    row = [-1] * len(SLOTS)
    for box, slot in INITIAL.items():
        row[slot_index(slot)] = box_index(box)
    return row


@register_env(ENV_ID, max_episode_steps=None)
class MagmaWarehouseEnv(DefaultEnv):
    """Two Pandas sharing a row of slots; see the module docstring."""

    def __init__(self, *args: object, robot_uids: tuple[str, ...] = ("panda", "panda"), **kwargs: object):
        self.boxes: dict[str, Actor] = {}
        self.slots: dict[str, Actor] = {}
        super().__init__(*args, robot_uids=robot_uids, **kwargs)

    def robot_base_poses(self) -> list[sapien.Pose]:
        return [sapien.Pose(p=[x, y, 0.0], q=[float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))])
                for x, y, yaw in ROBOT_BASES]

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)
        self.boxes = {
            name: self.build_box(name, BOX_HALF_SIZE, BOX_COLORS[name],
                                 initial_xy=SLOT_CENTERS[INITIAL[name]])
            for name in BOXES
        }
        self.slots = {
            name: self.build_zone(name, center_xy=SLOT_CENTERS[name], half_size=SLOT_HALF_SIZE,
                                  color=SLOT_COLORS[name])
            for name in SLOTS
        }
        with torch.device(self.device):
            self.occupant = torch.tensor([initial_occupant()] * self.num_envs, dtype=torch.int64)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)
        with torch.device(self.device):
            b, n = len(env_idx), len(BOXES)
            rng = self._batched_episode_rng[env_idx]
            offset = np.asarray(rng.uniform(-BOX_JITTER, BOX_JITTER, (n, 2))).reshape(b, n, 2)
            yaw = np.asarray(rng.uniform(-BOX_YAW_JITTER, BOX_YAW_JITTER, n)).reshape(b, n)
            offset_t = torch.as_tensor(offset, dtype=torch.float32)
            half_yaw = torch.as_tensor(yaw / 2, dtype=torch.float32)
            for i, name in enumerate(BOXES):
                xyz = torch.zeros((b, 3))
                xyz[:, :2] = torch.tensor(SLOT_CENTERS[INITIAL[name]]) + offset_t[:, i]
                xyz[:, 2] = BOX_HALF_SIZE
                h = half_yaw[:, i]
                quat = torch.stack([torch.cos(h), 0 * h, 0 * h, torch.sin(h)], dim=1)
                self.boxes[name].set_pose(MSPose.create_from_pq(xyz, quat))
            for name, slot in self.slots.items():
                xyz = torch.zeros((b, 3))
                xyz[:, :2] = torch.tensor(SLOT_CENTERS[name])
                xyz[:, 2] = SLOT_Z
                slot.set_pose(MSPose.create_from_pq(xyz))
            self.occupant[env_idx] = torch.tensor(initial_occupant(), dtype=torch.int64)

    def get_magma_extra_state(self) -> StateTree:
        # one leaf per slot: a tool's state update changes only the slot it touched
        return {f"occupant_{slot}": self.occupant[:, i].clone() for i, slot in enumerate(SLOTS)}

    def set_magma_extra_state(self, state: StateTree) -> None:
        columns = [state[f"occupant_{slot}"].to(self.device) for slot in SLOTS]
        self.occupant = torch.stack(columns, dim=1).to(torch.int64)
