"""Scripted trajectories for the cube world (top-down grasps)."""

from __future__ import annotations

import torch

from magma_core.simulation.data_structures import Pose
from magma_scenarios.common.tabletop import down_quat
from magma_scenarios.common.tabletop import grasp_yaw as cube_yaw


def pick_and_place(cube: torch.Tensor, zone: torch.Tensor) -> list:
    """Poses + OPEN/CLOSE that pick the cube (pose7) and set it down on the zone (pose7)."""
    q = down_quat(cube_yaw(cube))
    cx, cy, cz = (float(v) for v in cube[:3])
    zx, zy = float(zone[0]), float(zone[1])
    return [
        "OPEN",
        Pose((cx, cy, cz + 0.10), q),
        Pose((cx, cy, cz), q),
        "CLOSE",
        Pose((cx, cy, cz + 0.12), q),
        Pose((zx, zy, 0.12), q),
        Pose((zx, zy, 0.025), q),
        "OPEN",
        Pose((zx, zy, 0.12), q),
    ]


def push(cube: torch.Tensor, distance: float = 0.06) -> list:
    """Poses that push the cube along +y by about ``distance`` with closed fingers."""
    q = down_quat(0.0)
    cx, cy = float(cube[0]), float(cube[1])
    start_y = cy - 0.06
    return [
        "CLOSE",
        Pose((cx, start_y, 0.12), q),
        Pose((cx, start_y, 0.02), q),
        Pose((cx, cy - 0.04 + distance, 0.02), q),
        Pose((cx, cy - 0.04 + distance, 0.12), q),
    ]
