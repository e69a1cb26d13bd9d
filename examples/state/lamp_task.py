"""Tools, a goal, stages and tasks on the lamp world (``lamp_world.py``).

``switch_lamp`` has an effect on hidden world state: it returns an ``EnvStateUpdate`` that
the engine applies to the calling slot. The other state examples build their tasks from
these pieces.
"""

from __future__ import annotations

import torch
from lamp_world import ENV_ID

from magma_core.simulation.data_structures import (
    EnvStateUpdate,
    SituationInit,
    StageInput,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.goals import At, BaseGoal
from magma_core.simulation.stage import (
    BaseStageEnvironmentTransition,
    BaseTaskStage,
    StageGlobalParameters,
)
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool


# --8<-- [start:tool]
class LampTools(BaseToolsAPI):
    @register_tool(
        description="Switch the lamp on or off.",
        params_spec={"on": {"description": "true for on, false for off", "type": bool}},
    )
    def switch_lamp(self, obs, env_id, params):
        on = params["on"]
        result = ToolResult(
            ok=True,
            reason=f"Lamp switched {'on' if on else 'off'}.",
            state_updates=[EnvStateUpdate(path=("magma_extra_state", "lamp_on"), value=on)],
        )
        return ToolExecution(poses=["OK"], verifier=lambda raw_obs: result)
# --8<-- [end:tool]


class LampIsOn(BaseGoal):
    """1 in every slot where the lamp is on, else 0 (the world exports ``lamp_on``)."""

    def verify(self, obs: dict) -> torch.Tensor:
        return obs["extra"]["lamp_on"].reshape(-1).long()


# --8<-- [start:stage]
class SwitchLampOn(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, reset_at_end: bool = False) -> None:
        super().__init__(
            goals=[LampIsOn()],
            stage_goal_description="The lamp is on.",
            stage_input=StageInput(UserInstruction("Switch the lamp on."), False),
            global_parameters=StageGlobalParameters(reset_at_end=reset_at_end),
        )

    def _to_spec_arguments(self) -> dict:
        return {"reset_at_end": self.global_parameters.reset_at_end}
# --8<-- [end:stage]


# --8<-- [start:transition]
class MoveCubeAtEntry(BaseStageEnvironmentTransition):
    def __init__(self, x: float) -> None:
        self.x = x

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        actor = env_state["actors"]["cube"]
        indices = env_ids.to(actor.device)
        actor[indices, 0] = self.x
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"x": self.x}
# --8<-- [end:transition]


class CubeToZone(BaseTaskStage):
    """Put the cube in the zone; someone may have moved it just before (entry transition)."""

    target_tool_calls = 2
    max_tool_calls = None  # becomes 2 x target

    def __init__(self, entry_transition: BaseStageEnvironmentTransition | None = None) -> None:
        super().__init__(
            goals=[At("cube", "zone", thresh=0.06)],
            stage_goal_description="The cube is in the zone.",
            stage_input=StageInput(UserInstruction("Put the cube in the zone."), False),
            entry_transition=entry_transition,
        )

    def _to_spec_arguments(self) -> dict:
        return {"entry_transition": self.entry_transition}


class LampTask(BaseTask):
    """The lamp world with its tools; each example picks its own stages."""

    maniskill_env_id = ENV_ID
    Tools_cls = LampTools
    situation_init = SituationInit({"objects": ["cube"], "areas": ["zone"]})
    stages = [SwitchLampOn()]
