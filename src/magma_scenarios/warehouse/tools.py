"""The warehouse tools: pick, place, check_stock, clear_jam; and the ``Jam`` error.

Task attributes name what the agent knows: ``objects`` (boxes) and ``slots``. A call that
cannot work is refused before any motion with a reason the agent can act on: a box or slot
out of the selected arm's reach (:data:`~magma_scenarios.warehouse.world.REACH`), an
occupied slot, a box or slot another arm uses in the same decision (reservations through
``ToolBatchContext.try_reserve``: namespaces ``boxes`` and ``slots``).

Occupancy lives in the world's extra state (``occupant_<slot>``: the index of the box in the
slot, or -1): pick and place return ``EnvStateUpdate``s for the one slot they change, so two
arms working in the same decision never overwrite each other's update. Motions into a
hand-over slot share the execution group ``handover`` (one arm after the other) and end
with the arm back over its own dock; other motions of the two arms run at the same time.
"""

from __future__ import annotations

import math

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
from magma_scenarios.common.actions import tcp_key
from magma_scenarios.common.tabletop import (
    down_quat,
    held_object,
    pick_trajectory,
    place_trajectory,
    position,
)
from magma_scenarios.warehouse.world import (
    BOXES,
    HANDOVERS,
    REACH,
    REST,
    ROBOTS,
    SLOT_THRESH,
    SLOTS,
    box_index,
)

HANDOVER_GROUP = "handover"


def occupant_key(slot: str) -> str:
    """The extra-state key (and ``obs["extra"]`` key) of ``slot``'s occupancy."""
    return f"occupant_{slot}"


def slot_of(raw: dict, env_id: int, box: str) -> str | None:
    """The slot whose occupancy names ``box``, if any."""
    index = box_index(box)
    return next((s for s in SLOTS if int(raw["extra"][occupant_key(s)][env_id]) == index), None)


def occupant(raw: dict, env_id: int, slot: str) -> str | None:
    """The box in ``slot`` (from the occupancy state), if any."""
    index = int(raw["extra"][occupant_key(slot)][env_id])
    return BOXES[index] if index >= 0 else None


def _refuse(reason: str) -> ToolExecution:
    return ToolExecution([], None, reason=reason, reason_is_public=True)


def _rest(robot: str) -> Pose:
    return Pose(REST[robot], down_quat(0.0))


def _in_slot(raw: dict, env_id: int, box: str, slot: str) -> bool:
    b, s = position(raw, box, env_id), position(raw, slot, env_id)
    return math.dist((float(b[0]), float(b[1])), (float(s[0]), float(s[1]))) <= SLOT_THRESH and float(b[2]) < 0.035


class Jam(BaseError):
    """Injected error: ``robot`` is jammed for the stage. Its pick and place calls fail
    (before motion) until the agent calls ``clear_jam`` with that robot."""

    def __init__(self, robot: str = "panda-1") -> None:
        if robot not in ROBOTS:
            raise ValueError(f"Jam: unknown robot {robot!r}; robots: {', '.join(ROBOTS)}")
        self.robot = robot

    def get_name(self) -> str:
        return f"Jam[{self.robot}]"

    def initialize(self, obs: Observation, env_id: int) -> dict[str, object]:
        return {"cleared": False}

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        context = tool_execution.context if isinstance(tool_execution.context, dict) else {}
        if context.get("robot") != self.robot or args.get("cleared"):
            return False
        if tool_execution.function_name == "clear_jam":
            args["cleared"] = True
            context["jam_cleared"] = True
            return False
        tool_execution.fail(
            f"{self.robot} is jammed: a box is stuck in its gripper. Call clear_jam with "
            f"{self.robot} before it can move again.",
            failure_flag=ToolErrorFlag.INJECTION_ERROR,
        )
        tool_execution.reason_is_public = True
        return True

    def get_description(self, args: dict | None) -> str:
        return f"{self.robot} may be jammed until clear_jam is called for it."


class WarehouseTools(BaseToolsAPI):
    """What the two Pandas of the warehouse can do."""

    @register_tool(
        description="Pick up a box from a slot the arm reaches (panda-0: side A and the "
                    "hand-over slots; panda-1: side B and the hand-over slots).",
        params_spec={"object": {"description": "name of the box to pick", "type": str,
                                "values_from": "objects"}},
        errors=[Jam],
    )
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        robot, box = obs.selected_robot_name, params["object"]
        known = list(obs.task_attributes.get("objects", []))
        if box not in known or box not in BOXES:
            return _refuse(f"Unknown object {box!r}. Known objects: {', '.join(known)}.")
        raw, tcp = obs.maniskill_obs, tcp_key(obs, ROBOTS)
        if held_object(raw, env_id, BOXES, tcp) is not None:
            return _refuse(f"{robot} already holds a box; place it first.")
        slot = slot_of(raw, env_id, box)
        if slot is None:
            return _refuse(f"The {box} is in no slot (another arm holds it).")
        if slot not in REACH[robot]:
            return _refuse(f"The {box} is in {slot}, out of {robot}'s reach; {robot} reaches "
                           f"{', '.join(REACH[robot])}.")
        context = obs.tool_batch_context
        if not context.try_reserve("boxes", box, robot) or not context.try_reserve("slots", slot, robot):
            return _refuse(f"Another arm works on the {box} or {slot} in this decision.")
        poses = pick_trajectory(raw["extra"][box][env_id])
        handover = slot in HANDOVERS
        if handover:
            poses.append(_rest(robot))

        def verify(after: dict) -> ToolResult:
            if held_object(after, env_id, [box], tcp) == box:
                return ToolResult(ok=True, reason=f"{robot} picked the {box} from {slot}.",
                                  state_updates=[EnvStateUpdate(("magma_extra_state", occupant_key(slot)), -1)])
            return ToolResult(ok=False, reason=f"{robot} did not get hold of the {box}.")

        return ToolExecution(poses, verify, context={"robot": robot, "object": box, "slot": slot},
                             allowed_moving_actors=[box],
                             execution_group=HANDOVER_GROUP if handover else None)

    @register_tool(
        description="Put the held box down in an empty slot the arm reaches.",
        params_spec={"slot": {"description": "name of an empty slot", "type": str,
                              "values_from": "slots"}},
        errors=[Jam],
    )
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        robot, slot = obs.selected_robot_name, params["slot"]
        known = list(obs.task_attributes.get("slots", []))
        if slot not in known or slot not in SLOTS:
            return _refuse(f"Unknown slot {slot!r}. Known slots: {', '.join(known)}.")
        raw, tcp = obs.maniskill_obs, tcp_key(obs, ROBOTS)
        box = held_object(raw, env_id, BOXES, tcp)
        if box is None:
            return _refuse(f"{robot} holds nothing; pick a box first.")
        if slot not in REACH[robot]:
            return _refuse(f"{slot} is out of {robot}'s reach; {robot} reaches {', '.join(REACH[robot])}.")
        there = occupant(raw, env_id, slot)
        if there is not None:
            return _refuse(f"{slot} is occupied by the {there}.")
        if not obs.tool_batch_context.try_reserve("slots", slot, robot):
            return _refuse(f"Another arm uses {slot} in this decision.")
        center = raw["extra"][slot][env_id]
        poses = place_trajectory((float(center[0]), float(center[1])))
        handover = slot in HANDOVERS
        if handover:
            poses.append(_rest(robot))

        def verify(after: dict) -> ToolResult:
            if _in_slot(after, env_id, box, slot):
                update = EnvStateUpdate(("magma_extra_state", occupant_key(slot)), box_index(box))
                return ToolResult(ok=True, reason=f"{robot} placed the {box} in {slot}.",
                                  state_updates=[update])
            return ToolResult(ok=False, reason=f"The {box} did not land in {slot}.")

        return ToolExecution(poses, verify, context={"robot": robot, "object": box, "slot": slot},
                             allowed_moving_actors=[box],
                             execution_group=HANDOVER_GROUP if handover else None)

    @register_tool(description="List every slot and the box in it (or empty).", is_detection=True)
    def check_stock(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        known = [s for s in obs.task_attributes.get("slots", []) if s in SLOTS]

        def verify(after: dict) -> ToolResult:
            seen = [f"{s}: {occupant(after, env_id, s) or 'empty'}" for s in known]
            return ToolResult(ok=True, reason="Stock: " + "; ".join(seen) + ".")

        return ToolExecution(["OK"], verify)

    @register_tool(description="Clear a jam of the selected arm (no motion).", errors=[Jam])
    def clear_jam(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        robot = obs.selected_robot_name
        made: list[ToolExecution] = []  # the execution copies its context: read it there

        def verify(after: dict) -> ToolResult:
            if made[0].context.get("jam_cleared"):
                return ToolResult(ok=True, reason=f"{robot}'s jam is cleared.")
            return ToolResult(ok=True, reason=f"{robot} was not jammed.")

        made.append(ToolExecution(["OK"], verify, context={"robot": robot}))
        return made[0]
