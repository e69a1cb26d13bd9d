"""The cube world's tools: pick, place, detect_objects and switch_machine."""

from __future__ import annotations

from magma_core.simulation.data_structures import (
    EnvStateUpdate,
    Observation,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.common import actions
from magma_scenarios.cube.world import ZONE_HALF_SIZE


class CubeTools(BaseToolsAPI):
    """What a Panda in the cube world can do."""

    @register_tool(
        description="Pick up an object from the table.",
        params_spec={"object": {"description": "name of the object to pick", "type": str,
                                "values_from": "objects"}},
        execution_group="arm",
    )
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.pick(obs, env_id, params, robots=self.robot_names())

    @register_tool(
        description="Place the object held by the gripper in an area.",
        params_spec={"area": {"description": "name of the area", "type": str, "values_from": "areas"}},
        execution_group="arm",
    )
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.place(
            obs, env_id, params, robots=self.robot_names(), zone_half_size=ZONE_HALF_SIZE
        )

    @register_tool(description="List the visible objects and where they are.", is_detection=True)
    def detect_objects(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return actions.detect(obs, env_id, params, zone_half_size=ZONE_HALF_SIZE)

    @register_tool(
        description="Switch the machine on or off.",
        params_spec={"on": {"description": "true to switch it on, false for off", "type": bool}},
    )
    def switch_machine(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        on = params["on"]

        def verify(raw_obs: dict) -> ToolResult:
            return ToolResult(
                ok=True,
                reason=f"Machine switched {'on' if on else 'off'}.",
                state_updates=[EnvStateUpdate(path=("magma_extra_state", "machine_on"), value=on)],
            )

        return ToolExecution(["OK"], verify, allowed_moving_actors=[])
