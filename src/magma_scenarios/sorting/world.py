"""The sorting worlds' layout, without the simulator: names, colours, sizes and places.

Two worlds share one table (the cube world's frame: table top at z = 0, metres). Both
diagrams are seen from behind the robots: +x away from them (up), +y to the left.

* ``MagmaSorting-v1``: one Panda at ``(-0.615, 0)`` facing +x (as in the cube world). The
  zones lie in a row near the robot, the cubes in two rows beyond them (12 cm between
  cubes, 16 cm between zone centres)::

        x = 0.11                 purple  orange                  (5th, 6th cube)
        x = 0.01        red      green   blue     yellow
        x = -0.11     [zone_a]      [zone_c]      [zone_b]
        cubes at y = 0.18, 0.06, -0.06, -0.18; zones at y = 0.16, 0, -0.16
                               panda (x = -0.615)

* ``MagmaSortingDuo-v1``: two Pandas side by side, both facing +x like the single one,
  ``panda-0`` at ``(-0.615, -0.35)`` and ``panda-1`` at ``(-0.615, 0.35)``. Each arm has its
  own half of the table: its cubes and its own zone in front of it (out of the other arm's
  reach). ``zone_c`` lies between them and both arms reach it::

        x = 0.02     orange  green   yellow          blue    red     purple
        x = -0.12           [zone_b]        [zone_c]        [zone_a]
        y =          0.47    0.35    0.23    0       -0.23   -0.35   -0.47
                             panda-1                         panda-0   (x = -0.615)

  The arms may work at the same time anywhere except both in ``zone_c`` (their hands would
  collide there). Why not facing each other across the table: ``tabletop.pick_trajectory``
  folds grasp yaws into [-45°, 45°] in the world frame, which a Panda facing +y reaches only
  near its joint-7 limit (its placing in some zones then has no IK solution).

A world has the first ``num_cubes`` (3 to 6) cubes of :data:`COLORS` order and the first
``num_zones`` (2 or 3) zones of :data:`ZONE_NAMES`. Cube centres get a seeded offset of up
to :data:`CUBE_JITTER` in x and y and a yaw of up to :data:`CUBE_YAW_JITTER`; zones are fixed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "COLORS",
    "CUBE_HALF_SIZE",
    "CUBE_JITTER",
    "CUBE_YAW_JITTER",
    "DEFAULT_NUM_CUBES",
    "DEFAULT_NUM_ZONES",
    "DUO",
    "DUO_ENV_ID",
    "ENV_ID",
    "LAYOUTS",
    "MAX_CUBES",
    "MAX_ZONES",
    "MIN_CUBES",
    "MIN_ZONES",
    "SINGLE",
    "ZONE_COLORS",
    "ZONE_HALF_SIZE",
    "ZONE_NAMES",
    "Layout",
    "check_counts",
    "cube_names",
    "zone_names",
]

ENV_ID = "MagmaSorting-v1"
DUO_ENV_ID = "MagmaSortingDuo-v1"

#: Cube colours (RGBA) in the order cubes are added: cube ``i`` is ``f"{colour}_cube"``.
COLORS: dict[str, tuple[float, float, float, float]] = {
    "red": (0.85, 0.1, 0.1, 1.0),
    "green": (0.1, 0.7, 0.2, 1.0),
    "blue": (0.1, 0.25, 0.85, 1.0),
    "yellow": (0.95, 0.85, 0.1, 1.0),
    "purple": (0.55, 0.15, 0.75, 1.0),
    "orange": (0.95, 0.5, 0.05, 1.0),
}
ZONE_NAMES = ("zone_a", "zone_b", "zone_c")
#: Zone colours (RGBA): greys, so they never look like a cube's colour.
ZONE_COLORS: dict[str, tuple[float, float, float, float]] = {
    "zone_a": (0.85, 0.85, 0.85, 1.0),
    "zone_b": (0.55, 0.55, 0.55, 1.0),
    "zone_c": (0.3, 0.3, 0.3, 1.0),
}

CUBE_HALF_SIZE = 0.02
CUBE_JITTER = 0.01  # metres, uniform in x and y: neighbours stay >= 8 cm apart
CUBE_YAW_JITTER = math.pi / 12  # radians, uniform
ZONE_HALF_SIZE = (0.06, 0.06)

MIN_CUBES, MAX_CUBES, DEFAULT_NUM_CUBES = 3, len(COLORS), 4
MIN_ZONES, MAX_ZONES, DEFAULT_NUM_ZONES = 2, len(ZONE_NAMES), 3


@dataclass(frozen=True)
class Layout:
    """Where things stand in one sorting world (table frame, metres).

    Attributes:
        cube_centers: nominal xy of cube ``i`` (cube ``i`` is ``cube_names(6)[i]``).
        zone_centers: zone name → xy.
        robot_bases: per robot, ``(x, y, yaw)`` of its base (yaw about z; 0 faces +x).
        cube_robot: per cube, the index of the robot whose half of the table it lies in
            (the robot that reaches it).
        zone_robots: zone name → indices of the robots that reach it.
    """

    cube_centers: tuple[tuple[float, float], ...]
    zone_centers: dict[str, tuple[float, float]]
    robot_bases: tuple[tuple[float, float, float], ...]
    cube_robot: tuple[int, ...]
    zone_robots: dict[str, tuple[int, ...]]

    def cube_center(self, name: str) -> tuple[float, float]:
        """Nominal xy of the cube called ``name``."""
        return self.cube_centers[cube_names(MAX_CUBES).index(name)]

    def robot_of(self, name: str) -> int:
        """Index of the robot on whose side the cube called ``name`` lies."""
        return self.cube_robot[cube_names(MAX_CUBES).index(name)]

    def zones_of(self, robot: int) -> list[str]:
        """Names of the zones robot ``robot`` reaches, in :data:`ZONE_NAMES` order."""
        return [name for name in ZONE_NAMES if robot in self.zone_robots[name]]


SINGLE = Layout(
    cube_centers=(
        (0.01, 0.18),
        (0.01, 0.06),
        (0.01, -0.06),
        (0.01, -0.18),
        (0.11, 0.06),
        (0.11, -0.06),
    ),
    zone_centers={"zone_a": (-0.11, 0.16), "zone_b": (-0.11, -0.16), "zone_c": (-0.11, 0.0)},
    robot_bases=((-0.615, 0.0, 0.0),),
    cube_robot=(0, 0, 0, 0, 0, 0),
    zone_robots={"zone_a": (0,), "zone_b": (0,), "zone_c": (0,)},
)

DUO = Layout(
    cube_centers=(
        (0.02, -0.35),  # red: panda-0
        (0.02, 0.35),  # green: panda-1
        (0.02, -0.23),  # blue: panda-0
        (0.02, 0.23),  # yellow: panda-1
        (0.02, -0.47),  # purple: panda-0
        (0.02, 0.47),  # orange: panda-1
    ),
    zone_centers={"zone_a": (-0.12, -0.35), "zone_b": (-0.12, 0.35), "zone_c": (-0.12, 0.0)},
    robot_bases=((-0.615, -0.35, 0.0), (-0.615, 0.35, 0.0)),
    cube_robot=(0, 1, 0, 1, 0, 1),
    zone_robots={"zone_a": (0,), "zone_b": (1,), "zone_c": (0, 1)},
)

#: Env id → its layout.
LAYOUTS: dict[str, Layout] = {ENV_ID: SINGLE, DUO_ENV_ID: DUO}


def cube_names(n: int = DEFAULT_NUM_CUBES) -> list[str]:
    """Names of the first ``n`` cubes: ``["red_cube", "green_cube", ...]``."""
    if not 0 <= n <= MAX_CUBES:
        raise ValueError(f"there are at most {MAX_CUBES} cubes, asked for {n}")
    return [f"{color}_cube" for color in list(COLORS)[:n]]


def zone_names(n: int = DEFAULT_NUM_ZONES) -> list[str]:
    """Names of the first ``n`` zones: ``["zone_a", "zone_b", ...]``."""
    if not 0 <= n <= MAX_ZONES:
        raise ValueError(f"there are at most {MAX_ZONES} zones, asked for {n}")
    return list(ZONE_NAMES[:n])


def check_counts(num_cubes: int, num_zones: int) -> None:
    """Raise ``ValueError`` unless the counts are ones a sorting world supports."""
    if not (isinstance(num_cubes, int) and MIN_CUBES <= num_cubes <= MAX_CUBES):
        raise ValueError(
            f"num_cubes must be an int in [{MIN_CUBES}, {MAX_CUBES}], got {num_cubes!r}"
        )
    if not (isinstance(num_zones, int) and MIN_ZONES <= num_zones <= MAX_ZONES):
        raise ValueError(
            f"num_zones must be an int in [{MIN_ZONES}, {MAX_ZONES}], got {num_zones!r}"
        )
