"""The world state after a decision, kept compactly so a replay needs no simulator.

``world_state(sim, slot)`` reads one slot's snapshot (ManiSkill's ``get_state_dict()``
layout) and keeps what a top-down replay draws: every actor's pose (xyz + wxyz), every
articulation's root pose and joint positions, the world's extra state, and, when the
simulator offers ``robot_links(slot)``, each robot's link, finger and TCP positions. Velocities are
dropped and numbers rounded to 0.1 mm / 1e-4, so one state of a sorting world is ~1 KB of JSON.

``world_digest(states)`` fingerprints an episode's states, so that two runs can be compared
without loading them. ``scene_geometry(sim)`` is what does not change in an episode: shapes, sizes and colours of
the actors (when the simulator offers ``scene_geometry()``). Stand-in simulators without
these methods still get poses from their snapshots.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict, JSONValue

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.simulator import Simulator


DIGITS = 4  # 0.1 mm for positions, 1e-4 for quaternions and joint angles


def _row(value: object) -> list[float]:
    """The first row of a ``[1, ...]`` (or ``[...]``) tensor/array as rounded floats."""
    data = value.tolist() if hasattr(value, "tolist") else list(value)
    if data and isinstance(data[0], list):
        data = data[0]
    return [round(float(v), DIGITS) for v in data]


def _plain(value: object) -> JSONValue:
    """A JSON-able copy of an extra-state leaf (first row; bools and ints kept as such)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    data = value.tolist() if hasattr(value, "tolist") else value
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if isinstance(data, float):
        return round(data, DIGITS)
    if isinstance(data, list):
        return [round(v, DIGITS) if isinstance(v, float) else v for v in data]
    return data


def compact_state(state: Mapping[str, object]) -> JSONDict:
    """One slot's state tree (leaves ``[1, ...]``) in the compact replay form."""
    out: dict[str, JSONDict] = {"actors": {}, "articulations": {}, "extra": {}}
    for name, value in (state.get("actors") or {}).items():
        out["actors"][str(name)] = _row(value)[:7]
    for name, value in (state.get("articulations") or {}).items():
        row = _row(value)
        dof = max(0, (len(row) - 13) // 2)
        out["articulations"][str(name)] = {"pose": row[:7], "qpos": row[13 : 13 + dof]}
    extra = state.get("magma_extra_state") or {}
    out["extra"] = {str(k): _plain(v) for k, v in extra.items()}
    return out


def world_state(sim: Simulator, slot: int) -> JSONDict | None:
    """The compact world state of ``slot`` now; None when the simulator cannot say."""
    save = getattr(sim, "save_slot", None)
    if save is None:
        return None
    snapshot = save(slot)
    state = getattr(snapshot, "state", snapshot)
    if not isinstance(state, Mapping):
        return None
    world = compact_state(state)
    links = getattr(sim, "robot_links", None)
    if callable(links):
        world["robots"] = {name: _rounded(parts) for name, parts in links(slot).items()}
    return world


def world_digest(states: Sequence[JSONDict | None]) -> str:
    """SHA-256 of an episode's world states (canonical JSON): two runs store the same
    worlds exactly when their records carry the same digest."""
    text = json.dumps(list(states), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _rounded(value: object) -> JSONValue:
    """``value`` (nested lists/dicts of numbers) with floats rounded to :data:`DIGITS`."""
    if isinstance(value, Mapping):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return round(float(value), DIGITS) if isinstance(value, float) else value


def scene_geometry(sim: Simulator) -> JSONDict:
    """Shapes and colours of the world's actors (``{}`` when the simulator cannot say)."""
    geometry = getattr(sim, "scene_geometry", None)
    return dict(geometry()) if callable(geometry) else {}
