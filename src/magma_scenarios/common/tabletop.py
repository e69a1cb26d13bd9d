"""Top-down pick-and-place trajectories and checks for cube worlds on a table (z = 0 top).

Poses read from ``obs["extra"][name]`` are ``[N, 7]`` tensors: xyz then a wxyz quaternion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from magma_core.simulation.data_structures import Pose

APPROACH_HEIGHT = 0.12  # TCP height above the table when travelling
PLACE_HEIGHT = 0.025  # TCP height when releasing a 4 cm cube
HELD_DISTANCE = 0.03  # an object this close to the TCP (and lifted) is held
LIFTED_Z = 0.035  # an object's centre above this is off the table
SPOT_CLEARANCE = 0.05  # a placing spot this far from every other object is free


def down_quat(yaw: float) -> tuple[float, float, float, float]:
    """wxyz quaternion of a TCP pointing down, turned by ``yaw`` about the world z axis."""
    c, s = math.cos(yaw / 2), math.sin(yaw / 2)
    return (0.0, c, s, 0.0)


def grasp_yaw(pose7: torch.Tensor) -> float:
    """The object's yaw folded into [-pi/4, pi/4): a cube looks the same every quarter turn."""
    w, x, y, z = (float(v) for v in pose7[3:7])
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4


def pick_trajectory(obj_pose: torch.Tensor) -> list:
    """Open, come down on the object from above, close, lift."""
    q = down_quat(grasp_yaw(obj_pose))
    x, y, z = (float(v) for v in obj_pose[:3])
    return [
        "OPEN",
        Pose((x, y, z + APPROACH_HEIGHT - 0.02), q),
        Pose((x, y, z), q),
        "CLOSE",
        Pose((x, y, z + APPROACH_HEIGHT), q),
    ]


def place_trajectory(xy: Sequence[float], yaw: float = 0.0) -> list:
    """Travel above ``xy``, come down, open, go back up."""
    q = down_quat(yaw)
    x, y = float(xy[0]), float(xy[1])
    return [
        Pose((x, y, APPROACH_HEIGHT), q),
        Pose((x, y, PLACE_HEIGHT), q),
        "OPEN",
        Pose((x, y, APPROACH_HEIGHT), q),
    ]


def position(obs: dict, name: str, env_id: int) -> torch.Tensor:
    """xyz of ``name`` in slot ``env_id``."""
    return obs["extra"][name][env_id, :3].float()


def held_object(obs: dict, env_id: int, candidates: Sequence[str], tcp: str = "tcp") -> str | None:
    """The lifted candidate closest to the TCP, if one is within ``HELD_DISTANCE``."""
    tcp_xyz = position(obs, tcp, env_id)
    best, best_d = None, HELD_DISTANCE
    for name in candidates:
        if name not in obs["extra"]:
            continue
        xyz = position(obs, name, env_id)
        d = float(torch.linalg.norm(xyz - tcp_xyz))
        if xyz[2] > LIFTED_Z and d <= best_d:
            best, best_d = name, d
    return best


def in_zone(obs: dict, obj: str, zone: str, env_id: int, half_size: Sequence[float]) -> bool:
    """The object rests on the table inside the zone's footprint."""
    o, z = position(obs, obj, env_id), position(obs, zone, env_id)
    inside = abs(float(o[0] - z[0])) <= half_size[0] and abs(float(o[1] - z[1])) <= half_size[1]
    return inside and float(o[2]) < LIFTED_Z


def free_spot(
    obs: dict, zone: str, env_id: int, others: Sequence[str], half_size: Sequence[float]
) -> tuple[float, float]:
    """A point of the zone away from the objects already on it.

    Spots lie 6 cm apart along x (a top-down gripper opens along y, so its fingers never
    come down on a neighbour), first on the zone's middle line, then on lines beside it.
    """
    cx, cy = (float(v) for v in position(obs, zone, env_id)[:2])
    dx = min(0.03, half_size[0] - 0.025)
    dy = min(0.035, half_size[1] - 0.025)
    spots = [(cx - dx, cy), (cx + dx, cy), (cx - dx, cy + dy), (cx + dx, cy - dy),
             (cx - dx, cy - dy), (cx + dx, cy + dy)]
    occupied = [position(obs, o, env_id)[:2] for o in others if o in obs["extra"]]

    def clearance(spot: tuple[float, float]) -> float:
        if not occupied:
            return math.inf
        return min(math.dist(spot, (float(p[0]), float(p[1]))) for p in occupied)

    for spot in spots:
        if clearance(spot) >= SPOT_CLEARANCE:
            return spot
    return max(spots, key=clearance)
