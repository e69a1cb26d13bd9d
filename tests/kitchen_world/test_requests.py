"""The kitchen's generated tasks, without a simulator: chains, traces and bench transforms."""

from __future__ import annotations

import copy

import pytest

from magma_core.bench.task_spec import task_to_spec
from magma_core.scenarios import get_scenario
from magma_core.simulation.stage import CompletionAnswerStage
from magma_core.simulation.tasks import ToolCallEvent
from magma_scenarios.kitchen import bench_conditions
from magma_scenarios.kitchen.definitions import LongKitchen, LongKitchenJudged
from magma_scenarios.kitchen.requests import move, starting_state
from magma_scenarios.kitchen.stages import KitchenStage


def _calls(events):
    return [e.calls[0] for e in events if isinstance(e, ToolCallEvent)]


def test_the_scenario_is_registered():
    manifest = get_scenario("kitchen")
    assert {"FetchFromDrawer", "LatchedBox", "WhatIsInside", "SkillFetch"} <= set(manifest.presets)
    assert set(manifest.definitions) == {"LongKitchen", "LongKitchenJudged"}
    assert "kitchen" in manifest.suites


def test_a_move_out_of_a_closed_drawer_opens_it_and_the_rule_closes_it():
    state = starting_state()
    names = [(c.name, c.arguments) for c in _calls(move(state, "red_sponge", "bowl_a"))]
    assert names == [("open", {"target": "drawer_left"}), ("pick", {"object": "red_sponge"}),
                     ("place", {"location": "bowl_a"})]
    assert state.properties["open"]["drawer_left"] is True
    ruled = starting_state()
    ruled.properties["drawer_rule"] = True
    names = [c.name for c in _calls(move(ruled, "green_sponge", "box"))]
    assert names == ["open", "open", "pick", "place", "close"]  # drawer_right and the box
    assert ruled.properties["open"] == {"drawer_left": False, "drawer_right": False, "box": True}


@pytest.mark.parametrize("definition", [LongKitchen(), LongKitchenJudged()])
def test_fifty_seeds_give_traces_that_fit_their_stages(definition):
    kinds = set()
    for seed in range(50):
        task = definition.generate(seed)
        assert 1 <= len(task.stages) <= 20
        target = sum(s.target_tool_calls for s in task.stages
                     if not isinstance(s, CompletionAnswerStage))
        trace_calls = sum(len(e.calls) for e in task.perfect_trace().events
                          if isinstance(e, ToolCallEvent))
        assert trace_calls == target, seed
        for stage in task.stages:
            if isinstance(stage, KitchenStage):
                kinds |= {type(g).__name__ for g in stage.goals}
    assert "And" in kinds  # rules add joint and keep-out goals to some stages


def test_every_condition_applies_to_a_generated_task():
    spec = task_to_spec(LongKitchen().generate(3))
    for condition in ("execution_error", "interruption", "mission_update", "combined"):
        edited, interventions = bench_conditions.apply(condition, copy.deepcopy(spec), {})
        assert interventions and interventions[0]["type"] in condition.replace("combined",
                                                                                "mission_update")
        bench_conditions._segments(edited)  # the trace still covers every stage's calls
    with pytest.raises(ValueError, match="unknown condition"):
        bench_conditions.apply("nope", copy.deepcopy(spec), {})
