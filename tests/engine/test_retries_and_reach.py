"""Planner retries do not use up injected errors; far poses are refused before planning."""

from __future__ import annotations

import pytest

from magma_core.scenarios import load_preset
from magma_core.simulation.data_structures import (
    Decision,
    Pose,
    ToolCall,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.executor import Executor
from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.sorting.tools import GraspSlip

pytestmark = pytest.mark.sim


def test_a_retried_batch_reports_and_forgives_its_injected_error_once():
    two_arms = load_preset("sorting.TwoArms")

    class SlipTask(two_arms):
        stages = [ObjectsToZones({"red_cube": "zone_a"}, "Put the red cube in zone_a.",
                                 errors=[GraspSlip()])]

    with Executor(SlipTask(), num_slots=1, seed=0) as executor:
        out = executor.submit({0: Decision(tool_calls=[
            ToolCall("pick", {"object": "red_cube"}, "panda-0"),  # the injected slip
            ToolCall("pick", {"object": "blue_cube"}, "panda-1"),  # out of reach: retried
        ])})[0]
        slip, far = out.calls
        assert far.failure_flag is ToolErrorFlag.PLANNER_ERROR and far.attempts > 1
        assert slip.failure_flag is ToolErrorFlag.INJECTION_ERROR and slip.injected
        assert slip.forgiven and out.forgiven_tool_calls == 1
        assert "slipped" in slip.message
        again = executor.submit({0: Decision(tool_calls=[
            ToolCall("pick", {"object": "red_cube"}, "panda-0")])})[0]
        assert again.calls[0].ok  # the slip happened once, as reported


class MoveTools(BaseToolsAPI):
    @register_tool(description="Move the TCP.", params_spec={"x": {"description": "m", "type": float}})
    def move_to(self, obs, env_id, params):
        pose = Pose((params["x"], 0.0, 0.2), (0.0, 1.0, 0.0, 0.0))
        return ToolExecution([pose], lambda raw: ToolResult(ok=True, reason="moved"))


@pytest.mark.parametrize("x, reachable", [(0.1, True), (5.0, False), (1e6, False)])
def test_poses_beyond_reach_are_refused_before_planning(x, reachable):
    pick_place = load_preset("cube.PickPlace")

    class MoveTask(pick_place):
        Tools_cls = MoveTools

    with Executor(MoveTask(), num_slots=1, seed=0) as executor:
        [call] = executor.submit({0: Decision(tool_calls=[ToolCall("move_to", {"x": x}, "panda")])})[0].calls
    assert call.ok is reachable
    if not reachable:
        assert call.failure_flag is ToolErrorFlag.PLANNER_ERROR
        assert "m from its base" in call.message
