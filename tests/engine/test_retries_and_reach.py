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
        assert slip.forgiven and far.forgiven and out.forgiven_tool_calls == 2
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


def test_errors_of_a_later_stage_are_sampled_at_its_boundary():
    sorting = load_preset("sorting.GraspError")

    class LaterSlip(sorting):
        stages = [
            ObjectsToZones({"green_cube": "zone_a"}, "Put the green cube in zone_a."),
            ObjectsToZones({"red_cube": "zone_b"}, "Now the red cube in zone_b.",
                           errors=[GraspSlip()]),
        ]

    def pick(obj):
        return Decision(tool_calls=[ToolCall("pick", {"object": obj}, "panda")])

    def place(area):
        return Decision(tool_calls=[ToolCall("place", {"area": area}, "panda")])

    with Executor(LaterSlip(), num_slots=1, seed=0) as executor:
        assert executor.submit({0: pick("green_cube")})[0].calls[0].ok  # no error in stage 0
        assert executor.submit({0: place("zone_a")})[0].stage_index == 0
        assert executor.agent_view(0).stage_index == 1
        [slip] = executor.submit({0: pick("red_cube")})[0].calls
        assert slip.failure_flag is ToolErrorFlag.INJECTION_ERROR and slip.forgiven
        assert executor.submit({0: pick("red_cube")})[0].calls[0].ok
