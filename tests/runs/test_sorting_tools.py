"""The sorting tools refuse what is not theirs to do, with a reason."""

from __future__ import annotations

import pytest

from magma_core.scenarios import load_preset
from magma_core.simulation.data_structures import Decision, ToolCall, ToolErrorFlag
from magma_core.simulation.executor import Executor

pytestmark = pytest.mark.sim


def test_add_area_accepts_only_zones():
    with Executor(load_preset("sorting.NewZone")(), num_slots=1, seed=0) as executor:
        for name in ("red_cube", "tcp", "zone_z"):
            executor.reset()  # the stage allows 2 calls: start afresh for each
            [call] = executor.submit({0: Decision(tool_calls=[
                ToolCall("add_area", {"area": name}, "panda")])})[0].calls
            assert call.failure_flag is ToolErrorFlag.BAD_CALL
            assert "no area named" in call.message
        [call] = executor.submit({0: Decision(tool_calls=[
            ToolCall("add_area", {"area": "zone_c"}, "panda")])})[0].calls
        assert call.ok
        assert "zone_c" in executor.agent_view(0).attributes["areas"]
