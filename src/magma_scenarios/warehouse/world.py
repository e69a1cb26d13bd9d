"""The warehouse world's layout, without the simulator: names, places and who reaches what.

Two Pandas stand side by side, both facing +x (the sorting duo's stance): ``panda-0`` at
``(-0.615, -0.35)``, ``panda-1`` at ``(-0.615, 0.35)``. Each arm has its own side of the
table: two shelf slots and a dock that only it reaches. Two hand-over slots lie in the middle
and both arms reach them. Seen from behind the robots (+x up, +y to the left)::

    x = 0.02    shelf_b1  shelf_b2                      shelf_a2  shelf_a1
    x = -0.12           dock_b     [handover_2][handover_1]    dock_a
    y =          0.47   0.35 0.23   0.07        -0.07    -0.23 -0.35 -0.47
                        panda-1                                panda-0

A slot holds at most one box (4 cm cubes named by colour). Which box is in which slot is
kept in the world's extra state (``occupant_<slot>``: the index of its box in
:data:`BOXES`, or -1), updated by the tools' state updates, and the physics agrees with it.
At the start the red and blue boxes stand on panda-0's shelves, the green and yellow ones
on panda-1's; docks and hand-over slots are empty.

The hand-over slots are 14 cm apart: the tools run every motion into them in one execution
group (``handover``), one arm after the other, and each such motion ends with the arm back
over its own dock, so the two hands never meet there.
"""

from __future__ import annotations

import math

__all__ = [
    "BOXES",
    "BOX_HALF_SIZE",
    "BOX_JITTER",
    "BOX_YAW_JITTER",
    "ENV_ID",
    "HANDOVERS",
    "INITIAL",
    "REACH",
    "REST",
    "ROBOTS",
    "SLOTS",
    "SLOT_CENTERS",
    "SLOT_HALF_SIZE",
    "SLOT_THRESH",
    "box_index",
    "side_of",
    "slot_index",
]

ENV_ID = "MagmaWarehouse-v1"
ROBOTS = ("panda-0", "panda-1")
ROBOT_BASES = ((-0.615, -0.35, 0.0), (-0.615, 0.35, 0.0))

#: Box colour names -> RGBA; box ``i`` is ``BOXES[i]``.
BOX_COLORS: dict[str, tuple[float, float, float, float]] = {
    "red_box": (0.85, 0.1, 0.1, 1.0),
    "blue_box": (0.1, 0.25, 0.85, 1.0),
    "green_box": (0.1, 0.7, 0.2, 1.0),
    "yellow_box": (0.95, 0.85, 0.1, 1.0),
}
BOXES = tuple(BOX_COLORS)

SLOT_CENTERS: dict[str, tuple[float, float]] = {
    "shelf_a1": (0.02, -0.47),
    "shelf_a2": (0.02, -0.23),
    "dock_a": (-0.12, -0.35),
    "handover_1": (-0.12, -0.07),
    "handover_2": (-0.12, 0.07),
    "dock_b": (-0.12, 0.35),
    "shelf_b1": (0.02, 0.47),
    "shelf_b2": (0.02, 0.23),
}
SLOTS = tuple(SLOT_CENTERS)
HANDOVERS = ("handover_1", "handover_2")
SLOT_COLORS: dict[str, tuple[float, float, float, float]] = {
    name: ((0.35, 0.35, 0.35, 1.0) if name in HANDOVERS
           else (0.55, 0.45, 0.3, 1.0) if name.startswith("shelf") else (0.7, 0.7, 0.7, 1.0))
    for name in SLOTS
}
#: Robot -> the slots it reaches (its own side and both hand-over slots).
REACH: dict[str, tuple[str, ...]] = {
    "panda-0": ("shelf_a1", "shelf_a2", "dock_a", "handover_1", "handover_2"),
    "panda-1": ("handover_1", "handover_2", "dock_b", "shelf_b1", "shelf_b2"),
}
#: Robot -> where its TCP waits after a motion into a hand-over slot (over its own dock).
REST: dict[str, tuple[float, float, float]] = {
    "panda-0": (-0.12, -0.35, 0.16),
    "panda-1": (-0.12, 0.35, 0.16),
}
#: Where each box starts.
INITIAL: dict[str, str] = {
    "red_box": "shelf_a1",
    "blue_box": "shelf_a2",
    "green_box": "shelf_b1",
    "yellow_box": "shelf_b2",
}

BOX_HALF_SIZE = 0.02
BOX_JITTER = 0.008  # metres, uniform in x and y
BOX_YAW_JITTER = math.pi / 12
SLOT_HALF_SIZE = (0.05, 0.05)
SLOT_THRESH = 0.05  # a box within 5 cm (XY) of a slot's centre is in it (centres >= 14 cm apart)


def box_index(name: str) -> int:
    """Index of a box (its value in ``occupant_<slot>``)."""
    return BOXES.index(name)


def slot_index(name: str) -> int:
    """Index of a slot (its column in the env's ``occupant`` tensor)."""
    return SLOTS.index(name)


def side_of(slot: str) -> str | None:
    """The robot that alone reaches ``slot``; None for a hand-over slot."""
    if slot in HANDOVERS:
        return None
    return next(robot for robot, slots in REACH.items() if slot in slots)
