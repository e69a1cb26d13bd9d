"""Where things are in the kitchen, read from ``obs["extra"]`` (no simulator needed).

An object's *place* is the innermost container holding it (``bowl_a``, ``bowl_b``, ``box``,
``drawer_left``, ``drawer_right``), ``counter`` when it rests on the counter, ``hand`` when
lifted, else ``elsewhere``. A container's place is found the same way (``bowl_b`` starts in
``drawer_right``). Something is *hidden* when a closed drawer or the closed box holds it,
directly or through a bowl.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

from magma_scenarios.kitchen import world as w

OPEN_FRACTION = 0.9  # a joint this far along its range is open
CLOSED_FRACTION = 0.1  # and this near 0, closed
LIMITS = {"drawer_left": w.DRAWER_TRAVEL, "drawer_right": w.DRAWER_TRAVEL, "box": w.LID_OPEN}
SPOT_CLEARANCE = 0.035


def xyz(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in extra[name][env_id, :3])
    return x, y, z


def joint(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> float:
    """The joint position of ``name`` (a drawer: metres out; the box: lid radians)."""
    return float(extra["joints"][env_id, w.JOINTS.index(name)])


def is_open(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> bool:
    return joint(extra, name, env_id) >= OPEN_FRACTION * LIMITS[name]


def is_closed(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> bool:
    return joint(extra, name, env_id) <= CLOSED_FRACTION * LIMITS[name]


def _inside(extra: Mapping[str, torch.Tensor], obj: str, container: str, env_id: int) -> bool:
    ox, oy, oz = xyz(extra, obj, env_id)
    cx, cy, cz = xyz(extra, container, env_id)
    if container in w.BOWLS:
        hx, hy, top = w.BOWL_HALF[0], w.BOWL_HALF[1], 2 * w.BOWL_HALF[2] + 0.04
    elif container == w.BOX:
        hx, hy, top = w.BOX_HALF[0] - w.BOX_WALL, w.BOX_HALF[1] - w.BOX_WALL, 2 * w.BOX_HALF[2]
    else:
        hx, hy, top = w.TRAY_INNER[0] + 0.005, w.TRAY_INNER[1] + 0.005, w.HOUSING_TOP[0]
    return abs(ox - cx) <= hx and abs(oy - cy) <= hy and cz < oz < cz + top


def place_of(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> str:
    """The place of object or bowl ``name`` (see the module docstring)."""
    candidates = [c for c in (*w.BOWLS, w.BOX, *w.DRAWERS) if c != name and c in extra]
    for container in candidates:  # bowls first: the innermost container wins
        if name in w.BOWLS and container in w.BOWLS:
            continue
        if _inside(extra, name, container, env_id):
            return container
    z = xyz(extra, name, env_id)[2]
    if z < 0.045:
        return "counter"
    return "hand" if z > 0.06 else "elsewhere"


def chain(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> list[str]:
    """The places holding ``name``, innermost first (``["bowl_b", "drawer_right"]``)."""
    out: list[str] = []
    current = name
    while True:
        where = place_of(extra, current, env_id)
        out.append(where)
        if where not in w.BOWLS:
            return out
        current = where


def hidden(extra: Mapping[str, torch.Tensor], name: str, env_id: int) -> bool:
    """Whether a closed drawer or the closed box holds ``name``."""
    return any(c in w.JOINTS and not is_open(extra, c, env_id) for c in chain(extra, name, env_id))


def spots(extra: Mapping[str, torch.Tensor], place: str, env_id: int) -> list[tuple[float, float, float]]:
    """Placing spots of ``place``: ``(x, y, floor z)``."""
    if place == "counter":
        return [(x, y, 0.0) for x, y in w.COUNTER_SPOTS]
    cx, cy, cz = xyz(extra, place, env_id)
    if place in w.BOWLS:
        return [(cx + dx, cy + dy, cz + w.BOWL_FLOOR) for dx, dy in w.SPOT_OFFSETS]
    if place == w.BOX:
        return [(cx + dx, cy + dy, w.BOX_WALL) for dx, dy in w.SPOT_OFFSETS]
    return [(cx + dx, cy + dy, w.TRAY_FLOOR[1]) for dx, dy in w.DRAWER_SPOT_OFFSETS]


def free_spot(
    extra: Mapping[str, torch.Tensor], place: str, env_id: int, others: Sequence[str]
) -> tuple[float, float, float] | None:
    """The first spot of ``place`` with nothing (object or bowl) within reach, else None."""
    occupied = [xyz(extra, o, env_id)[:2] for o in others if o in extra]
    bowls = [xyz(extra, b, env_id)[:2] for b in w.BOWLS if b in extra]
    for spot in spots(extra, place, env_id):
        near = [math.dist(spot[:2], p) for p in occupied]
        if near and min(near) < SPOT_CLEARANCE:
            continue
        if place in ("counter", *w.DRAWERS) and any(
            abs(spot[0] - b[0]) < w.BOWL_HALF[0] + 0.03 and abs(spot[1] - b[1]) < w.BOWL_HALF[1] + 0.03
            for b in bowls
        ):
            continue
        return spot
    return None
