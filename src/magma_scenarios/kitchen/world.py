"""The kitchen world's layout, without the simulator: names, kinds, sizes and places.

One Panda at ``(-0.615, 0)`` facing +x works at a counter (the table, top at z = 0). Seen
from behind the robot (+x up, +y to the left)::

    x = 0.05..0.23   [drawer_left]                       [drawer_right]
    x = -0.07..0.07                     [ box ]
                       y = 0.20            y = 0        y = -0.20 (holds bowl_b)
    x = -0.22          counter row 1 (y = 0.27, 0.15, -0.15, -0.27)  [bowl_a] at y = 0
    x = -0.31          counter row 2 (y = 0.20, 0.08, -0.08, -0.20)
                                     panda (x = -0.615)

* Two **drawers** (``drawer_left``, ``drawer_right``): a fixed housing and a tray on a
  prismatic joint along x that slides out towards the robot by :data:`DRAWER_TRAVEL`.
  ``drawer_right`` holds the bowl ``bowl_b``.
* The **box** (``box``): an open box whose lid turns on a revolute joint (the hinge along y at
  the box's far top edge) up to :data:`LID_OPEN` radians. The lid can be *latched* (extra
  state: a closed lid looks the same latched or not); a latched lid does not open until
  the latch is released (the ``unlatch`` tool).
* Two **bowls** (``bowl_a`` on the counter, ``bowl_b`` in ``drawer_right``): open square
  containers, dynamic, never picked.
* **Objects** of three kinds (cup, block, sponge) and four colours, see :data:`OBJECTS`.

Articulations move the way a hand moves them: while the gripper is closed and empty and
its TCP is within :data:`HANDLE_RADIUS` of an articulation's handle, the joint follows the
hand (its drive target tracks the TCP; the handle is a point, not a body). The ``open`` and
``close`` tools bring the closed hand to the handle and pull, push or swing it along the
joint's path; what lies in a drawer rides with its tray.

Places an object can be in: ``counter``, a bowl, ``box`` or a drawer (the innermost
container holding it). What is inside a closed drawer or a closed box cannot be seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "BOWLS",
    "BOWL_HALF",
    "BOX_CENTER",
    "BOX_HALF",
    "COLORS",
    "CONTAINERS",
    "COUNTER_SPOTS",
    "DRAWERS",
    "DRAWER_TRAVEL",
    "ENV_ID",
    "HANDLE_RADIUS",
    "JOINTS",
    "KINDS",
    "LID_OPEN",
    "OBJECTS",
    "PLACES",
    "ObjectSpec",
    "kind_of",
]

ENV_ID = "MagmaKitchen-v1"

COLORS: dict[str, tuple[float, float, float, float]] = {
    "red": (0.85, 0.1, 0.1, 1.0),
    "green": (0.1, 0.7, 0.2, 1.0),
    "blue": (0.1, 0.25, 0.85, 1.0),
    "yellow": (0.95, 0.85, 0.1, 1.0),
}
KINDS = ("cup", "block", "sponge")


@dataclass(frozen=True)
class ObjectSpec:
    """One object: its kind, colour and shape (``half`` is xyz half sizes; a cup is a
    cylinder of radius ``half[0]``)."""

    name: str
    kind: str
    color: str
    half: tuple[float, float, float]


_HALF = {"cup": (0.02, 0.02, 0.025), "block": (0.02, 0.02, 0.02), "sponge": (0.02, 0.02, 0.0125)}
#: The objects, in the order of the world's arrays.
OBJECTS: tuple[ObjectSpec, ...] = tuple(
    ObjectSpec(f"{color}_{kind}", kind, color, _HALF[kind])
    for color, kind in (
        ("red", "cup"), ("blue", "cup"), ("green", "block"), ("yellow", "block"),
        ("red", "sponge"), ("green", "sponge"),
    )
)

DRAWERS = ("drawer_left", "drawer_right")
BOWLS = ("bowl_a", "bowl_b")
BOX = "box"
#: Articulations the agent opens and closes.
JOINTS = (*DRAWERS, BOX)
#: Containers an object can be put in (capacity :data:`CAPACITY` each).
CONTAINERS = (*BOWLS, BOX, *DRAWERS)
PLACES = ("counter", *CONTAINERS)
CAPACITY = 2

# -- drawers ----------------------------------------------------------------------------------
DRAWER_Y = {"drawer_left": 0.20, "drawer_right": -0.20}
DRAWER_TRAVEL = 0.19
TRAY_INNER = (0.08, 0.08)  # interior half sizes (x, y)
TRAY_WALL = 0.01
TRAY_FLOOR = (0.004, 0.012)  # floor bottom and top z
TRAY_WALL_TOP = 0.07
TRAY_CLOSED_X = 0.13  # tray centre when closed (the tray spans 0.04..0.22)
HOUSING_X = (0.05, 0.235)
HOUSING_TOP = (0.085, 0.095)
#: Where bowl_b sits (its drawer) at the start.
BOWL_IN_DRAWER = {"bowl_b": "drawer_right"}

# -- the box ----------------------------------------------------------------------------------
BOX_CENTER = (0.0, 0.0)
BOX_HALF = (0.07, 0.07, 0.03)  # outer half sizes; walls 1 cm, floor 1 cm
BOX_WALL = 0.01
LID_THICKNESS = 0.01
LID_OPEN = 1.75  # radians
HINGE = (BOX_CENTER[0] + BOX_HALF[0], 2 * BOX_HALF[2])  # (x, z) of the hinge axis
HANDLE_REACH = 0.17  # the lid's handle point lies this far from the hinge (beyond the lid)

# -- bowls ------------------------------------------------------------------------------------
BOWL_HALF = (0.065, 0.065, 0.02)  # outer; walls 1 cm, floor 0.5 cm
BOWL_WALL = 0.01
BOWL_FLOOR = 0.005
BOWL_A_XY = (-0.22, 0.0)

HANDLE_RADIUS = 0.025
HANDLE_Z = 0.075  # TCP height at a drawer handle
DRAWER_HANDLE_GAP = 0.015  # handle point in front of the tray's front wall

COUNTER_SPOTS: tuple[tuple[float, float], ...] = (
    (-0.22, 0.27), (-0.22, 0.15), (-0.22, -0.15), (-0.22, -0.27),
    (-0.31, 0.20), (-0.31, 0.08), (-0.31, -0.08), (-0.31, -0.20),
)
#: Offsets of the two spots of a container from its centre (along x).
SPOT_OFFSETS = ((-0.03, 0.0), (0.03, 0.0))
DRAWER_SPOT_OFFSETS = ((-0.055, 0.0), (0.005, 0.0))  # from the tray centre: the exposed part
OBJECT_JITTER = 0.005


def kind_of(name: str) -> str:
    """The kind of the object ``name`` (``red_cup`` → ``cup``)."""
    for spec in OBJECTS:
        if spec.name == name:
            return spec.kind
    raise ValueError(f"unknown object {name!r}")


def object_spec(name: str) -> ObjectSpec:
    for spec in OBJECTS:
        if spec.name == name:
            return spec
    raise ValueError(f"unknown object {name!r}")


def lid_handle(angle: float) -> tuple[float, float]:
    """(x, z) of the lid's handle point when the lid is open by ``angle`` radians."""
    hx, hz = HINGE
    return (hx - HANDLE_REACH * math.cos(angle), hz + LID_THICKNESS + HANDLE_REACH * math.sin(angle))


def drawer_handle_x(q: float) -> float:
    """x of a drawer's handle point when the drawer is out by ``q`` metres."""
    return TRAY_CLOSED_X - q - TRAY_INNER[0] - TRAY_WALL - DRAWER_HANDLE_GAP


#: Where each object starts: a counter spot index, or a container.
START: dict[str, int | str] = {
    "red_cup": 0, "blue_cup": "bowl_a", "green_block": 1, "yellow_block": 2,
    "red_sponge": "drawer_left", "green_sponge": "bowl_b",
}
