"""A failed stage names each unmet goal with what was last observed; a stage whose goals
already hold when it starts is a scenario warning of the episode, reported by the run loop."""

from __future__ import annotations

import re

from engine.helpers import PICK, PLACE_A, act
from engine.scenario import PlaceCubeStage, make_task
from magma_core.simulation.executor import EXCEEDED, SUCCESS

POSITION = r"\(-?\d\.\d{3}, -?\d\.\d{3}, -?\d\.\d{3}\)"


def test_an_exceeded_stage_names_its_unmet_goal_with_the_last_positions(world) -> None:
    executor = world(make_task([PlaceCubeStage(target=1, maximum=2)])).executor
    executor.submit({0: PICK})
    out = executor.submit({0: act("detect")})[0]
    assert out.status == EXCEEDED
    reason = executor.record(0).reason
    assert "Unmet goals at the last verification: At(obj='cube', area='zone_a', thresh=0.05) = 0" in reason
    assert re.search(rf"cube at {POSITION}, zone_a at {POSITION}", reason), reason
    assert "warnings" not in executor.record(0).to_dict()  # no warning, no key: records keep their bytes


def test_a_stage_whose_goals_hold_at_its_start_is_a_scenario_warning(world) -> None:
    task = make_task([PlaceCubeStage("zone_a"), PlaceCubeStage("zone_a", "Put it in zone A again.")])
    executor = world(task).executor
    assert executor.record(0).warnings == []  # stage 0: the cube is not in zone_a yet
    executor.submit({0: PICK})
    executor.submit({0: PLACE_A})  # stage 0 done: stage 1 starts with its goal already met
    (warning,) = executor.record(0).warnings
    assert warning.startswith("scenario warning: every goal of stage 1 (PlaceCubeStage) already holds")
    assert "At(obj='cube', area='zone_a', thresh=0.05)" in warning
    assert executor.record(0).to_dict()["warnings"] == [warning]


def test_the_run_loop_reports_a_warning_once_when_the_episode_meets_it(fake, tmp_path) -> None:
    from magma_core.agents import TraceAgent
    from magma_core.runs.loop import RunLoop
    from magma_core.simulation.data_structures import ToolCall
    from magma_core.simulation.tasks import PerfectTrace, ToolCallEvent
    from magma_core.store import RunStore

    task = make_task([PlaceCubeStage("zone_a"), PlaceCubeStage("zone_a")])
    trace = PerfectTrace([ToolCallEvent([ToolCall("pick", {"object": "cube"}, "panda")]),
                          ToolCallEvent([ToolCall("place", {"area": "zone_a"}, "panda")]),
                          ToolCallEvent([ToolCall("detect", {}, "panda")])])
    executor = fake(task).executor
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "CubeTest", {})
    events = []
    summaries = RunLoop(task, TraceAgent(trace), executor, store, "r", episodes=2, seed=0,
                        listener=lambda event, state, payload: events.append((event, payload))).run()
    assert [s.status for s in summaries] == [SUCCESS, SUCCESS]  # the bug: any call finishes stage 1
    warnings = [p for e, p in events if e == "warning"]
    assert len(warnings) == 1 and "every goal of stage 1" in warnings[0] and "(episode 0" in warnings[0]
