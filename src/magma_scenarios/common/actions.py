"""Tool bodies shared by the built-in scenarios: pick, place and detect on a table.

Each function takes the tool's ``Observation``, the slot and the parameters and returns a
``ToolExecution``; the scenario's ``BaseToolsAPI`` subclass declares the tools and calls these.
Task attributes name what exists: ``objects`` (pickable actors) and ``areas`` (zones).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from magma_core.simulation.data_structures import Observation, ToolExecution, ToolResult
from magma_scenarios.common.tabletop import (
    free_spot,
    held_object,
    in_zone,
    pick_trajectory,
    place_trajectory,
)


def tcp_key(obs: Observation, robots: Sequence[str]) -> str:
    """The ``obs["extra"]`` key of the selected robot's TCP (``tcp`` or ``tcp_<i>``)."""
    robots = list(robots)
    extra = obs.maniskill_obs["extra"]
    if len(robots) > 1 and obs.selected_robot_name in robots:
        key = f"tcp_{robots.index(obs.selected_robot_name)}"
        if key in extra:
            return key
    return "tcp"


def _rejected(reason: str) -> ToolExecution:
    """A call refused before any motion (BAD_CALL), with a reason the agent can act on."""
    return ToolExecution([], None, reason=reason, reason_is_public=True)


def _all_held(
    obs: Observation, env_id: int, objects: Sequence[str], robots: Sequence[str]
) -> set[str]:
    """Objects held by any robot of the slot."""
    extra = obs.maniskill_obs["extra"]
    keys = [f"tcp_{i}" for i in range(len(robots)) if f"tcp_{i}" in extra] or ["tcp"]
    return {h for k in keys if (h := held_object(obs.maniskill_obs, env_id, objects, k))}


def pick(obs: Observation, env_id: int, params: Mapping, *, robots: Sequence[str]) -> ToolExecution:
    """Grasp ``params["object"]`` from above and lift it."""
    objects = list(obs.task_attributes.get("objects", []))
    name = params["object"]
    if name not in objects:
        return _rejected(f"Unknown object {name!r}. Known objects: {', '.join(objects)}.")
    raw, tcp = obs.maniskill_obs, tcp_key(obs, robots)
    if held_object(raw, env_id, objects, tcp) is not None:
        return _rejected("The gripper already holds an object; place it first.")
    if name in _all_held(obs, env_id, objects, robots):
        return _rejected(f"The {name} is held by another robot.")
    if not obs.tool_batch_context.try_reserve("objects", name, obs.selected_robot_name):
        return _rejected(f"The {name} is already being picked by another robot.")

    def verify(after: dict) -> ToolResult:
        if held_object(after, env_id, [name], tcp) == name:
            return ToolResult(ok=True, reason=f"Picked the {name}.")
        return ToolResult(ok=False, reason=f"The gripper did not hold the {name}.")

    return ToolExecution(
        pick_trajectory(raw["extra"][name][env_id]),
        verify,
        context={"object": name},
        allowed_moving_actors=[name],
    )


def place(
    obs: Observation,
    env_id: int,
    params: Mapping,
    *,
    robots: Sequence[str],
    zone_half_size: Sequence[float],
) -> ToolExecution:
    """Set the held object down on ``params["area"]``, beside what is already there."""
    objects = list(obs.task_attributes.get("objects", []))
    areas = list(obs.task_attributes.get("areas", []))
    area = params["area"]
    if area not in areas:
        return _rejected(f"Unknown area {area!r}. Known areas: {', '.join(areas)}.")
    raw, tcp = obs.maniskill_obs, tcp_key(obs, robots)
    held = held_object(raw, env_id, objects, tcp)
    if held is None:
        return _rejected("The gripper holds nothing; pick an object first.")
    others = [o for o in objects if o != held]
    spot = free_spot(raw, area, env_id, others, zone_half_size)

    def verify(after: dict) -> ToolResult:
        if in_zone(after, held, area, env_id, zone_half_size):
            return ToolResult(ok=True, reason=f"Placed the {held} in {area}.")
        return ToolResult(ok=False, reason=f"The {held} did not land in {area}.")

    return ToolExecution(
        place_trajectory(spot, _tcp_yaw(raw, env_id, tcp)),
        verify,
        context={"object": held, "area": area},
        allowed_moving_actors=[held],
    )


def _tcp_yaw(raw: dict, env_id: int, tcp: str) -> float:
    """The yaw of a top-down TCP, so that placing does not twist the held object.

    A top-down TCP is ``(0, cos(yaw/2), sin(yaw/2), 0)`` up to sign; anything else gives 0.
    """
    w, x, y, z = (float(v) for v in raw["extra"][tcp][env_id, 3:7])
    if abs(w) > 0.5 or abs(z) > 0.5:
        return 0.0
    return 2 * math.atan2(y, x)


def detect(
    obs: Observation, env_id: int, params: Mapping, *, zone_half_size: Sequence[float]
) -> ToolExecution:
    """Report the objects and areas the robot can see (from the task attributes)."""
    objects = list(obs.task_attributes.get("objects", []))
    areas = list(obs.task_attributes.get("areas", []))

    def verify(after: dict) -> ToolResult:
        located = []
        for name in objects:
            where = [
                a
                for a in areas
                if a in after["extra"] and in_zone(after, name, a, env_id, zone_half_size)
            ]
            located.append(f"{name} ({where[0] if where else 'on the table'})")
        return ToolResult(ok=True, reason="Visible objects: " + ", ".join(located) + ".")

    return ToolExecution(["OK"], verify)
