"""The cube scenario's presets, each with the reference trace that solves it optimally."""

from __future__ import annotations

import torch

from magma_core.json_types import JSONValue
from magma_core.simulation.data_structures import (
    SituationInit,
    StageInput,
    ToolCall,
    UserInstruction,
)
from magma_core.simulation.goals import BaseGoal
from magma_core.simulation.stage import BaseTaskStage, StageGlobalParameters
from magma_core.simulation.tasks import (
    BaseTask,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.cube.tools import CubeTools
from magma_scenarios.cube.transitions import MoveCubeAtEntry

ENV_ID = "MagmaCube-v1"
ATTRIBUTES = {"objects": ["cube"], "areas": ["zone_a", "zone_b"], "machines": ["machine"]}


def _call(name: str, **arguments: JSONValue) -> ToolCallEvent:
    return ToolCallEvent([ToolCall(name, arguments, "panda")])


class MachineOn(BaseGoal):
    """1 where the machine is on, else 0."""

    def verify(self, obs: dict) -> torch.Tensor:
        return obs["extra"]["machine_on"].reshape(-1).to(torch.int64)


class SwitchMachineOn(BaseTaskStage):
    """Switch the machine on (one call, no motion)."""

    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, reset_at_end: bool = False) -> None:
        super().__init__(
            goals=[MachineOn()],
            stage_goal_description="The machine is on.",
            stage_input=StageInput(UserInstruction("Switch the machine on."), False),
            global_parameters=StageGlobalParameters(reset_at_end=reset_at_end),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"reset_at_end": self.global_parameters.reset_at_end}


class _CubeTask(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = CubeTools
    situation_init = SituationInit(ATTRIBUTES)
    randomized_config_path = "randomization.yaml"


class PickPlace(_CubeTask):
    """Put the cube in zone A, then tell the user it is done."""

    stages = [ObjectsToZones({"cube": "zone_a"}, "Put the cube in zone A.", True)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Put the cube in zone A."),
                _call("pick", object="cube"),
                _call("place", area="zone_a"),
                MessageEvent("The cube is in zone A."),
            ]
        )


class MovedCube(_CubeTask):
    """Put the cube in zone A; someone moves it away; put it back."""

    stages = [
        ObjectsToZones({"cube": "zone_a"}, "Put the cube in zone A.", False),
        ObjectsToZones(
            {"cube": "zone_a"},
            "Someone moved the cube. Put it back in zone A.",
            False,
            entry_transition=MoveCubeAtEntry(x=0.12),
        ),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Put the cube in zone A."),
                _call("pick", object="cube"),
                _call("place", area="zone_a"),
                UserEvent("Someone moved the cube. Put it back in zone A."),
                _call("pick", object="cube"),
                _call("place", area="zone_a"),
            ]
        )


class Machine(_CubeTask):
    """Switch the machine on (the world is reset afterwards), then put the cube in zone B."""

    stages = [
        SwitchMachineOn(reset_at_end=True),
        ObjectsToZones({"cube": "zone_b"}, "Now put the cube in zone B.", False),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Switch the machine on."),
                _call("switch_machine", on=True),
                UserEvent("Now put the cube in zone B."),
                _call("pick", object="cube"),
                _call("place", area="zone_b"),
            ]
        )
