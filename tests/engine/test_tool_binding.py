"""Each slot's tools are bound to that slot's own robots (on CPU every slot is its own env)."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.data_structures import (
    Decision,
    Observation,
    SituationInit,
    StageInput,
    ToolCall,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import BaseGoal
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool

pytestmark = pytest.mark.sim


class Never(BaseGoal):
    def verify(self, obs: dict) -> torch.Tensor:
        return torch.zeros(obs["extra"]["cube"].shape[0], dtype=torch.int64)


class AgentTools(BaseToolsAPI):
    @register_tool(description="Report the robot's first joint position, read from its agent.")
    def joint(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        qpos = self.get_agent(obs.selected_robot_name).robot.get_qpos()
        value = float(qpos[0, 0])
        return ToolExecution(["OK"], lambda raw: ToolResult(ok=True, reason=f"{value:.6f}"))


class Forever(BaseTaskStage):
    target_tool_calls = 5
    max_tool_calls = 10

    def __init__(self) -> None:
        super().__init__([Never()], "never", StageInput(UserInstruction("Report."), False))

    def _to_spec_arguments(self) -> dict:
        return {}


class JointTask(BaseTask):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = AgentTools
    situation_init = SituationInit({})
    stages = [Forever()]


def test_get_agent_answers_with_the_slots_own_robot():
    import magma_scenarios.cube.env  # noqa: F401  (registers the world)

    with Executor(JointTask(), num_slots=2, seed=3) as executor:
        qpos = executor.sim.robot_qpos("panda")  # [2, dof], seeded noise differs per slot
        assert abs(float(qpos[0, 0]) - float(qpos[1, 0])) > 1e-6
        decision = Decision(tool_calls=[ToolCall("joint", {}, "panda")])
        outcomes = executor.submit({0: decision, 1: decision})
        for slot in (0, 1):
            reported = float(outcomes[slot].calls[0].message)
            assert reported == pytest.approx(float(qpos[slot, 0]), abs=1e-5)
