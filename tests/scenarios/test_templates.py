"""The predecessor's templates (stages, requests, relation constraints, placement grid) and
sorting.RuleSorting, the built-in definition that uses them."""

from __future__ import annotations

import random

import pytest
import torch

from magma_core.simulation.data_structures import ToolBatchContext
from magma_core.simulation.stage import TextOnlyValidationMode
from magma_core.simulation.tasks import TaskState
from magma_scenarios.sorting.rule_definitions import RuleSorting
from magma_scenarios.sorting.rule_requests import ColourRule, GuardedObjectsToZones, target_of
from magma_scenarios.templates.constraints import (
    RelationAssignment,
    RelationAssignmentConstraint,
    RelationDefault,
    resolve,
)
from magma_scenarios.templates.placement import PlacementGrid
from magma_scenarios.templates.requests import GiveObjectAssignmentRequest
from magma_scenarios.templates.requests.interact_request import BaseConstraintRequest
from magma_scenarios.templates.stages import ForbiddenElemStage, MissingInformationStage


def _state() -> TaskState:
    return TaskState(attributes={"objects": ["a", "b"], "areas": ["z1", "z2"]},
                     relations={"object_type": {"a": "red", "b": "blue"}, "type_area": {},
                                "object_area": {}})


def test_relation_constraints_assign_default_replay_and_go_outdated() -> None:
    assert RelationAssignment is RelationAssignmentConstraint
    state = _state()
    RelationAssignment("red", "z1", "type_area", "object_type", "areas").apply(state)
    assert resolve(state, "type_area", "red") == "z1" and resolve(state, "type_area", "blue") is None
    RelationDefault("type_area", "z2", "areas").apply(state)  # clears the exceptions
    assert resolve(state, "type_area", "red") == "z2" and len(state.constraints_history) == 2
    with pytest.raises(ValueError, match="not one of areas"):
        RelationAssignment("red", "nowhere", "type_area", "object_type", "areas").apply(state)
    rule = RelationAssignment("red", "z1", "type_area", "object_type", "areas")
    state.attributes["areas"] = ["z2"]
    assert rule.outdated(state)


def test_give_object_assignment_makes_a_rule_stage_and_applies_its_constraints() -> None:
    request = GiveObjectAssignmentRequest(max_simultaneous_change=2)
    assert isinstance(request, BaseConstraintRequest) and request.reset_at_end is True
    state = _state()
    params = request.sample_parameters(state, random.Random(1))
    (stage,) = request.create_stages(state, params)
    assert stage.is_text_only() and stage.stage_input.instruction.get_content() == params.instruction
    after = request.apply_request(state.clone(), params)
    for constraint in params.constraints:
        assert after.relations["object_area"][constraint.source] == constraint.target
    judged = GiveObjectAssignmentRequest(judged=True).create_stages(state, params)[0]
    assert judged.global_parameters.text_only_validation is TextOnlyValidationMode.JUDGE


def test_text_stage_templates_ask_or_refuse() -> None:
    ask = MissingInformationStage("Put the cube away.", "zone", say_only=True)
    refuse = ForbiddenElemStage("Put the cube in zone_c.", "zone_c", "never use zone_c")
    assert ask.is_text_only() and refuse.is_text_only() and not ask.goals
    assert ask.global_parameters.text_only_validation is TextOnlyValidationMode.SAY_ONLY
    assert "refuses to use zone_c" in refuse.global_parameters.verification_prompt
    assert type(refuse).from_spec(refuse.to_spec()).element == "zone_c"


def test_placement_grid_gives_each_call_of_a_batch_its_own_free_spot() -> None:
    grid = PlacementGrid(rows=2, cols=2, spacing=0.1)
    context = ToolBatchContext()
    first = grid.reserve(context, "z1", (0.0, 0.0), occupied=[(-0.05, -0.05)], owner="r1")
    second = grid.reserve(context, "z1", (0.0, 0.0), occupied=[(-0.05, -0.05)], owner="r2")
    assert first == pytest.approx((-0.05, 0.05)) and second == pytest.approx((0.05, -0.05))
    assert grid.free_spot((0, 0), occupied=grid.spots((0, 0))) is None


def _obs(**xy: tuple[float, float]) -> dict:
    extra = {}
    for name, (x, y) in xy.items():
        pose = torch.zeros(1, 7)
        pose[0, 0], pose[0, 1], pose[0, 3] = x, y, 1.0
        extra[name] = pose
    return {"extra": extra}


def test_a_later_breach_of_an_acknowledged_forbid_rule_fails_the_move() -> None:
    stage = GuardedObjectsToZones({"red_cube": "zone_a"}, "Put the red_cube in zone_a.", True,
                                  kept={"blue_cube": None}, closed=["zone_c"],
                                  objects=["red_cube", "blue_cube"], zones=["zone_a", "zone_b", "zone_c"])
    zones = {"zone_a": (0.0, 0.0), "zone_b": (0.3, 0.0), "zone_c": (0.6, 0.0)}
    done = _obs(red_cube=(0.0, 0.0), blue_cube=(0.0, 0.5), **zones)
    touched = _obs(red_cube=(0.0, 0.0), blue_cube=(0.3, 0.0), **zones)  # forbidden cube moved
    closed = _obs(red_cube=(0.6, 0.0), blue_cube=(0.0, 0.5), **zones)  # forbidden zone used
    score = lambda obs: int(stage.verif_env_completion(obs).reshape(-1)[0])  # noqa: E731
    assert score(done) == 1 and score(touched) == -1 and score(closed) == -1
    assert type(stage).from_spec(stage.to_spec()).closed == ["zone_c"]


def test_rule_sorting_takes_its_constructor_arguments_and_uses_the_templates() -> None:
    definition = RuleSorting(num_cubes=3, max_stages=8)
    assert definition.situation_init.attributes["objects"] == ["red_cube", "green_cube", "blue_cube"]
    kinds = set()
    for seed in range(30):
        task = definition.generate(seed)
        assert len(task.stages) <= 8 and task.trace is not None
        kinds |= {type(s).__name__ for s in task.stages}
    assert {"GuardedObjectsToZones", "MissingInformationStage", "Acknowledge"} <= kinds
    with pytest.raises(ValueError, match="num_cubes"):
        RuleSorting(num_cubes=1)
    state = definition.starting_state.clone()
    params = ColourRule().sample_parameters(state, random.Random(0))
    state = ColourRule().apply_request(state, params)
    source, target = params.constraints[0].source, params.constraints[0].target
    cube = next(c for c, t in state.relations["object_type"].items() if t == source)
    assert target_of(state, cube) == target


@pytest.mark.sim
def test_rule_sorting_runs_optimal_with_constructor_arguments(tmp_path) -> None:
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "magma_core.cli", "run", "sorting.RuleSorting",
                          "--episodes", "2", "--slots", "2", "--out", "out", "--num-cubes", "3",
                          "--max-stages", "6"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = json.loads((tmp_path / "out" / "sorting.RuleSorting.summary.json").read_text())["totals"]
    assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"]
