"""The sorting scenario's tools: pick, place, detect_objects, and add_area (an attribute edit)."""

from __future__ import annotations

from magma_core.simulation.data_structures import (
    Log,
    Observation,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.common import actions
from magma_scenarios.sorting.world import ZONE_HALF_SIZE, ZONE_NAMES


class GraspSlip(BaseError):
    """Injected error: the first grasp of the stage slips, before any motion."""

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        if args.get("slipped"):
            return False
        args["slipped"] = True
        tool_execution.fail(
            "The cube slipped out of the gripper.", failure_flag=ToolErrorFlag.INJECTION_ERROR
        )
        return True

    def get_description(self, args: dict | None) -> str:
        return "The gripper may lose its grip on the first grasp."


class SortingTools(BaseToolsAPI):
    """What the Pandas of the sorting worlds can do."""

    @register_tool(
        description="Pick up an object from the table.",
        params_spec={"object": {"description": "name of the object to pick", "type": str,
                                "values_from": "objects"}},
        errors=[GraspSlip],
    )
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.pick(obs, env_id, params, robots=self.robot_names())

    @register_tool(
        description="Place the object held by the gripper in an area.",
        params_spec={"area": {"description": "name of a known area", "type": str,
                              "values_from": "areas"}},
    )
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.place(
            obs, env_id, params, robots=self.robot_names(), zone_half_size=ZONE_HALF_SIZE
        )

    @register_tool(description="List the visible objects and where they are.", is_detection=True)
    def detect_objects(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.detect(obs, env_id, params, zone_half_size=ZONE_HALF_SIZE)

    @register_tool(
        description="Add an area of the table to the known areas.",
        params_spec={"area": {"description": "name of the area", "type": str}},
    )
    def add_area(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        area = params["area"]
        if area not in ZONE_NAMES or area not in obs.maniskill_obs["extra"]:
            return ToolExecution([], None, reason=f"There is no area named {area!r} on the table.")
        if area in obs.task_attributes.get("areas", []):
            return ToolExecution([], None, reason=f"{area} is already a known area.")
        result = ToolResult(
            ok=True,
            reason=f"{area} added to the known areas.",
            logs=Log(("areas", area), action="ADD"),
        )
        return ToolExecution(["OK"], lambda raw_obs: result)
