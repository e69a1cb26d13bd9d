"""The cube world's layout, without the simulator: ids, sizes and places (table frame, metres).

``magma_scenarios.cube.env`` builds ``MagmaCube-v1`` from these; tools, stages and agents
that only need the layout import this module and never pay for ManiSkill.
"""

from __future__ import annotations

import math

__all__ = [
    "CUBE_CENTER",
    "CUBE_HALF_SIZE",
    "CUBE_JITTER",
    "CUBE_YAW_JITTER",
    "ENV_ID",
    "ZONE_A_CENTER",
    "ZONE_B_CENTER",
    "ZONE_HALF_SIZE",
]

ENV_ID = "MagmaCube-v1"
CUBE_HALF_SIZE = 0.02
CUBE_CENTER = (0.0, -0.1)
CUBE_JITTER = 0.02  # metres, uniform in x and y
CUBE_YAW_JITTER = math.pi / 12  # radians, uniform
ZONE_HALF_SIZE = (0.06, 0.06)
ZONE_A_CENTER = (0.0, 0.15)
ZONE_B_CENTER = (0.15, 0.05)
