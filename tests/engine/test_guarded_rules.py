"""Two rules an independent mutation check found unguarded: the cap on forgiven calls per
stage, and an entry transition confined to its own slot even when it writes every row."""

from __future__ import annotations

import torch

from engine.helpers import PICK, act
from engine.scenario import GripperJam, MachineStage, PlaceCubeStage, make_task
from magma_core.simulation.data_structures import ToolErrorFlag, ToolExecution
from magma_core.simulation.executor import MAX_FORGIVEN_TOOL_CALLS_PER_STAGE
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition


class AlwaysJam(GripperJam):
    """Jams every pick (an injected failure each time)."""

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict) -> bool | None:
        tool_execution.fail("The gripper jammed.")
        return True


class MoveEveryCube(BaseStageEnvironmentTransition):
    """A careless transition: ignores ``env_ids`` and moves the cube of EVERY row."""

    def __init__(self, x: float) -> None:
        self.x = x

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        env_state["actors"]["cube"][:, 0] = self.x
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"x": self.x}


def test_at_most_three_injected_failures_per_stage_are_forgiven(fake) -> None:
    assert MAX_FORGIVEN_TOOL_CALLS_PER_STAGE == 3
    stage = PlaceCubeStage(errors=[AlwaysJam()], target=2, maximum=10)
    executor = fake(make_task([stage])).executor
    outcomes = [executor.submit({0: PICK})[0] for _ in range(4)]
    calls = [out.calls[0] for out in outcomes]
    assert all(c.injected and c.failure_flag is ToolErrorFlag.INJECTION_ERROR for c in calls)
    assert [c.forgiven for c in calls] == [True, True, True, False]  # the 4th is not
    assert [(o.tool_calls, o.forgiven_tool_calls) for o in outcomes] == [
        (1, 1), (2, 2), (3, 3), (4, 3)]
    assert executor.record(0).stages[0].forgiven_tool_calls == 3


def test_a_transition_writing_every_row_changes_only_its_own_slot(world) -> None:
    task = make_task([MachineStage(), PlaceCubeStage(entry_transition=MoveEveryCube(x=0.12))])
    run = world(task, 2)
    before = run.cube(1)
    out = run.executor.submit({0: act("switch_machine", on=True), 1: act("detect")})
    assert out[0].next_view.stage_index == 1 and out[1].next_view.stage_index == 0
    assert abs(float(run.cube(0)[0]) - 0.12) < 1e-3
    assert torch.allclose(run.cube(1), before, atol=1e-3)  # slot 1 never entered that stage
