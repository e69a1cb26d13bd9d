"""The kitchen's tools: detect_objects, pick, place, open, close and unlatch.

``open`` and ``close`` bring the closed, empty hand to the articulation's handle and move it
along the joint's path (a drawer: straight out or in; the box's lid: an arc about its
hinge); the world makes the joint follow the hand (see :mod:`magma_scenarios.kitchen.env`).
``unlatch`` touches the box's latch; the latch is extra state, released by the tool's
result. Task attributes: ``objects`` (what can be picked) and ``places`` (where things go).
"""

from __future__ import annotations

from collections.abc import Sequence

from magma_core.simulation.data_structures import (
    EnvStateUpdate,
    Observation,
    Pose,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.common.tabletop import down_quat, held_object, pick_trajectory
from magma_scenarios.kitchen import places as pl
from magma_scenarios.kitchen import world as w

DOWN = down_quat(0.0)
TRAVEL_Z = 0.17  # TCP height when travelling over the counter
LID_STEPS = 6
GRASP_RAISE = 0.006


class GraspSlip(BaseError):
    """Injected error: the first grasp of the stage slips, before any motion."""

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        if args.get("slipped"):
            return False
        args["slipped"] = True
        tool_execution.fail(
            "The object slipped out of the gripper.", failure_flag=ToolErrorFlag.INJECTION_ERROR
        )
        return True

    def get_description(self, args: dict | None) -> str:
        return "The gripper may lose its grip on the first grasp."


def _refuse(reason: str) -> ToolExecution:
    return ToolExecution([], None, reason=reason, reason_is_public=True)


def _pose(x: float, y: float, z: float) -> Pose:
    return Pose((x, y, z), DOWN)


def drawer_path(name: str, q_from: float, q_to: float) -> list:
    """Close the hand, come down on the handle, slide it from ``q_from`` to ``q_to``, let go."""
    y = w.DRAWER_Y[name]
    x0, x1 = w.drawer_handle_x(q_from), w.drawer_handle_x(q_to)
    return ["CLOSE", _pose(x0, y, TRAVEL_Z), _pose(x0, y, w.HANDLE_Z),
            _pose((x0 + x1) / 2, y, w.HANDLE_Z), _pose(x1, y, w.HANDLE_Z), "OPEN",
            _pose(x1, y, TRAVEL_Z)]


def lid_path(a_from: float, a_to: float) -> list:
    """Close the hand, come to the lid's handle, swing it from ``a_from`` to ``a_to``."""
    y = w.BOX_CENTER[1]
    start = w.lid_handle(a_from)
    out: list = ["CLOSE", _pose(start[0], y, start[1] + 0.08), _pose(start[0], y, start[1])]
    for k in range(1, LID_STEPS + 1):
        x, z = w.lid_handle(a_from + (a_to - a_from) * k / LID_STEPS)
        out.append(_pose(x, y, z))
    end = w.lid_handle(a_to)
    return [*out, "OPEN", _pose(end[0] - 0.05, y, end[1] + 0.05)]


def kitchen_pick(pose7: Sequence[float]) -> list:
    """``tabletop.pick_trajectory`` with the grasp a little above the object's centre (the
    fingertips then stay clear of a container's floor)."""
    path = pick_trajectory(pose7)
    grasp = path[2]
    path[2] = Pose((grasp.p[0], grasp.p[1], grasp.p[2] + GRASP_RAISE), grasp.q)
    return path


def _known(obs: Observation, attribute: str) -> list[str]:
    return list(obs.task_attributes.get(attribute, []))


class KitchenTools(BaseToolsAPI):
    """What the Panda at the kitchen counter can do."""

    @register_tool(
        description="Pick up a visible object (from the counter, a container or an open drawer).",
        params_spec={"object": {"description": "name of the object to pick", "type": str,
                                "values_from": "objects"}},
        errors=[GraspSlip],
    )
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        objects = _known(obs, "objects")
        name = params["object"]
        if name not in objects:
            return _refuse(f"Unknown object {name!r}. Known objects: {', '.join(objects)}.")
        extra = obs.maniskill_obs["extra"]
        if held_object(obs.maniskill_obs, env_id, objects) is not None:
            return _refuse("The gripper already holds an object; place it first.")
        if pl.hidden(extra, name, env_id):
            return _refuse(f"The {name} cannot be seen from here.")
        if pl.place_of(extra, name, env_id) not in w.PLACES:
            return _refuse(f"The {name} is out of reach.")

        def verify(after: dict) -> ToolResult:
            if held_object(after, env_id, [name]) == name:
                return ToolResult(ok=True, reason=f"Picked the {name}.")
            return ToolResult(ok=False, reason=f"The gripper did not hold the {name}.")

        return ToolExecution(kitchen_pick(extra[name][env_id]), verify,
                             context={"object": name}, allowed_moving_actors=[name])

    @register_tool(
        description="Put the held object in a place: the counter, a container or an open drawer.",
        params_spec={"location": {"description": "where to put it (a known place)", "type": str,
                                  "values_from": "places"}},
    )
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        objects, places = _known(obs, "objects"), _known(obs, "places")
        where = params["location"]
        if where not in places or where not in w.PLACES:
            return _refuse(f"Unknown place {where!r}. Known places: {', '.join(places)}.")
        extra = obs.maniskill_obs["extra"]
        held = held_object(obs.maniskill_obs, env_id, objects)
        if held is None:
            return _refuse("The gripper holds nothing; pick an object first.")
        if where in w.JOINTS and not pl.is_open(extra, where, env_id):
            return _refuse(f"The {where} is closed; open it first.")
        if where in w.BOWLS and pl.hidden(extra, where, env_id):
            return _refuse(f"The {where} cannot be seen from here.")
        spot = pl.free_spot(extra, where, env_id, [o for o in objects if o != held])
        if spot is None:
            return _refuse(f"There is no room left in the {where}." if where != "counter"
                           else "There is no room left on the counter.")
        half = w.object_spec(held).half[2]
        x, y, floor = spot
        release = floor + half + 0.008

        def verify(after: dict) -> ToolResult:
            if pl.place_of(after["extra"], held, env_id) == where:
                return ToolResult(ok=True, reason=f"Put the {held} in the {where}."
                                  if where != "counter" else f"Put the {held} on the counter.")
            return ToolResult(ok=False, reason=f"The {held} did not land in the {where}.")

        poses = [_pose(x, y, TRAVEL_Z), _pose(x, y, release), "OPEN", _pose(x, y, TRAVEL_Z)]
        return ToolExecution(poses, verify, context={"object": held, "location": where},
                             allowed_moving_actors=[held])

    def _joint_call(self, obs: Observation, env_id: int, name: str, opening: bool) -> ToolExecution:
        if name not in w.JOINTS or name not in _known(obs, "places"):
            return _refuse(f"There is nothing called {name!r} to open or close; "
                           f"these open and close: {', '.join(w.JOINTS)}.")
        extra = obs.maniskill_obs["extra"]
        if held_object(obs.maniskill_obs, env_id, _known(obs, "objects")) is not None:
            return _refuse("The gripper holds an object; place it first.")
        if opening and pl.is_open(extra, name, env_id):
            return _refuse(f"The {name} is already open.")
        if not opening and pl.is_closed(extra, name, env_id):
            return _refuse(f"The {name} is already closed.")
        if opening and name == w.BOX and bool(extra["box_latched"][env_id]):
            return _refuse("The box's lid is latched; unlatch it first.")
        q = pl.joint(extra, name, env_id)
        goal = pl.LIMITS[name] if opening else 0.0
        path = lid_path(q, goal) if name == w.BOX else drawer_path(name, q, goal)
        inside = [o for o in _known(obs, "objects") + list(w.BOWLS)
                  if o in extra and name in pl.chain(extra, o, env_id)]
        verb = "Opened" if opening else "Closed"

        def verify(after: dict) -> ToolResult:
            done = pl.is_open if opening else pl.is_closed
            if done(after["extra"], name, env_id):
                return ToolResult(ok=True, reason=f"{verb} the {name}.")
            return ToolResult(ok=False, reason=f"The {name} did not {'open' if opening else 'close'}.")

        return ToolExecution(path, verify, context={"target": name},
                             allowed_moving_actors=inside)

    @register_tool(
        description="Open a drawer or the box's lid.",
        params_spec={"target": {"description": "what to open (a drawer or the box)", "type": str,
                                "values_from": "places"}},
    )
    def open(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return self._joint_call(obs, env_id, params["target"], True)

    @register_tool(
        description="Close a drawer or the box's lid.",
        params_spec={"target": {"description": "what to close (a drawer or the box)", "type": str,
                                "values_from": "places"}},
    )
    def close(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return self._joint_call(obs, env_id, params["target"], False)

    @register_tool(description="Release the latch of the box's lid (it then opens).")
    def unlatch(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        extra = obs.maniskill_obs["extra"]
        if not bool(extra["box_latched"][env_id]):
            return _refuse("The box's lid is not latched.")
        x = w.BOX_CENTER[0] - w.BOX_HALF[0] - 0.012
        poses = ["CLOSE", _pose(x - 0.04, 0.0, 0.12), _pose(x, 0.0, 0.035), _pose(x - 0.04, 0.0, 0.12)]
        update = EnvStateUpdate(("magma_extra_state", "box_latched"), False)

        def verify(after: dict) -> ToolResult:
            return ToolResult(ok=True, reason="Released the latch of the box.", state_updates=[update])

        return ToolExecution(poses, verify, allowed_moving_actors=[])

    @register_tool(description="List the visible objects and containers and where they are, "
                   "and which drawers and lids are open.", is_detection=True)
    def detect_objects(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        objects = _known(obs, "objects")

        def verify(after: dict) -> ToolResult:
            extra = after["extra"]
            seen = [f"{o} ({pl.place_of(extra, o, env_id)})" for o in objects
                    if o in extra and not pl.hidden(extra, o, env_id)]
            bowls = [f"{b} ({pl.place_of(extra, b, env_id)})" for b in w.BOWLS
                     if not pl.hidden(extra, b, env_id)]
            joints = [f"{j} ({'open' if pl.is_open(extra, j, env_id) else 'closed'})"
                      for j in w.JOINTS]
            text = "Visible objects: " + (", ".join(seen) or "none") + ". "
            text += "Containers: " + ", ".join(bowls + joints) + "."
            return ToolResult(ok=True, reason=text)

        return ToolExecution(["OK"], verify)
