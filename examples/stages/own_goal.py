"""A goal of your own: one integer -1/0/1 per row of the observation, and what happens
when a goal gets that wrong (the episode is an error whose reason names the goal).

Runs on the built-in cube world ``MagmaCube-v1`` with two slots.
Run: python examples/stages/own_goal.py
"""

from __future__ import annotations

import torch

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1 with ManiSkill)
from magma_core.simulation.data_structures import (
    Decision,
    SituationInit,
    StageInput,
    ToolCall,
    UserInstruction,
)
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import BaseGoal
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask
from magma_scenarios.cube.tools import CubeTools


# --8<-- [start:goal]
class Lifted(BaseGoal):
    def __init__(self, obj: str, height: float = 0.1):
        self.obj, self.height = obj, height

    def verify(self, obs):
        return (obs["extra"][self.obj][:, 2] > self.height).to(torch.int64)  # shape (N,)
# --8<-- [end:goal]


class AlwaysOne(BaseGoal):
    """Wrong: one score whatever the number of slots."""

    def verify(self, obs):
        return torch.tensor([1])


class Lift(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 3

    def __init__(self, goal):
        super().__init__(
            goals=[goal], stage_goal_description="The cube is lifted.",
            stage_input=StageInput(UserInstruction("Lift the cube."), False),
        )

    def _to_spec_arguments(self):
        return {}


def task(goal):
    class LiftCube(BaseTask):
        maniskill_env_id = "MagmaCube-v1"
        Tools_cls = CubeTools
        situation_init = SituationInit({"objects": ["cube"], "areas": ["zone_a", "zone_b"]})
        stages = [Lift(goal)]

    return LiftCube()


def main() -> None:
    pick = Decision(tool_calls=[ToolCall("pick", {"object": "cube"}, "panda")])
    for goal in (Lifted("cube"), AlwaysOne()):
        with Executor(task(goal), num_slots=2, seed=0) as executor:
            outcomes = executor.submit({0: pick, 1: pick})
            for slot in outcomes:
                record = executor.record(slot)
                print(f"{goal.get_name()} slot {slot}: {record.status} {record.reason}")
            statuses = {executor.record(slot).status for slot in outcomes}
            assert statuses == ({"success"} if isinstance(goal, Lifted) else {"error"})
    assert "AlwaysOne.verify" in executor.record(0).reason


if __name__ == "__main__":
    main()
