"""The seeded task generator and the built-in sorting definitions (no simulator needed)."""

from __future__ import annotations

import collections

import pytest

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.stage import CompletionAnswerStage
from magma_core.simulation.tasks import (
    BaseRequest,
    GeneratedTask,
    TaskDefinition,
    generate_task,
    task_to_json,
)
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.sorting.definitions import LongSorting, LongSortingJudged
from magma_scenarios.sorting.requests import ZONE_CAPACITY
from magma_scenarios.sorting.tools import SortingTools
from magma_scenarios.sorting.world import ENV_ID

REQUEST_TYPES = {"SortCube", "SortColourFamily", "ClearZone", "ForbidRule", "TableQuestion",
                 "ChangeTarget"}


class Move(BaseRequest):
    """A toy request: move a random cube to a random zone (2 calls, answer flag)."""

    def __init__(self, weight=1.0, target=2):
        self.weight, self.target = weight, target

    def sampling_weight(self, state):
        return self.weight

    def sample_parameters(self, state, rng):
        return {"object": rng.choice(state.attributes["objects"]),
                "zone": rng.choice(state.attributes["areas"])}

    def create_stages(self, state, params):
        stage = ObjectsToZones({params["object"]: params["zone"]}, "Move it.", True)
        stage.target_tool_calls = self.target
        return [stage]


class Toy(TaskDefinition):
    maniskill_env_id = ENV_ID
    Tools_cls = SortingTools
    situation_init = SituationInit({"objects": ["red_cube", "green_cube"], "areas": ["zone_a", "zone_b"]})
    active_requests = [Move()]


def test_same_seed_same_bytes_other_seed_other_task():
    first = task_to_json(LongSorting().generate(11))
    assert task_to_json(LongSorting().generate(11)) == first
    assert task_to_json(generate_task(LongSorting(), 11)) == first
    assert task_to_json(LongSorting().generate(12)) != first


def test_every_stage_carries_its_request_type_and_completion_stages_are_materialised():
    task = LongSorting().generate(5)
    assert all(stage.request_type in REQUEST_TYPES for stage in task.stages)
    assert not any(stage.stage_input.flag_answer_to_user for stage in task.stages)
    for record in task.requests:
        stages = task.stages[record.first_stage:record.first_stage + record.num_stages]
        assert {s.request_type for s in stages} == {record.request_type}
        if record.request_type in ("SortCube", "ChangeTarget", "ClearZone", "SortColourFamily"):
            assert isinstance(stages[-1], CompletionAnswerStage)
    assert sum(r.num_stages for r in task.requests) == len(task.stages)


def test_budget_and_stage_cap_are_respected():
    for seed in range(30):
        task = LongSorting().generate(seed, max_target_tool_calls=15)
        assert sum(s.target_tool_calls for s in task.stages) <= 15
        task = LongSorting().generate(seed, max_stages=6)
        assert len(task.stages) <= 6
    # a first request larger than the budget is still taken: a task is never empty
    task = Toy(active_requests=[Move(target=9)]).generate(0, max_target_tool_calls=5)
    assert len(task.stages) == 2 and task.stages[0].target_tool_calls == 9


def test_exact_targets_are_required():
    class NoTarget(Move):
        def create_stages(self, state, params):
            stage = ObjectsToZones({params["object"]: params["zone"]}, "Move it.")
            stage.target_tool_calls = None
            return [stage]

    with pytest.raises(ValueError, match="exact targets"):
        Toy(active_requests=[NoTarget()]).generate(0)


def test_requests_without_weight_are_never_drawn():
    with pytest.raises(ValueError, match="no request can be drawn"):
        Toy(active_requests=[Move(weight=0)]).generate(0)
    task = Toy(active_requests=[Move(weight=0), Move(weight=1, target=3)]).generate(0)
    assert {s.target_tool_calls for s in task.stages} == {3, 1}


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="seed"):
        LongSorting().generate("1")
    with pytest.raises(ValueError, match="max_target_tool_calls"):
        LongSorting().generate(1, max_target_tool_calls=0)
    with pytest.raises(ValueError, match="missing"):
        Toy(active_requests=None).build_default_task()
    with pytest.raises(TypeError, match="unknown fields"):
        Toy(stages=[])


def test_definition_defaults():
    toy = Toy()
    assert toy.name == "Build from Toy"
    assert toy.starting_state.attributes == toy.situation_init.attributes
    assert toy.starting_state.attributes is not toy.situation_init.attributes
    assert Toy().active_requests[0] is not toy.active_requests[0]  # copied per instance
    assert isinstance(toy.generate(3), GeneratedTask)


def test_sorting_tasks_are_long_horizon_and_cover_every_request():
    lengths, kinds = collections.Counter(), collections.Counter()
    for seed in range(100):
        task = LongSortingJudged().generate(seed)
        task.validate()
        lengths[len(task.stages)] += 1
        kinds.update(r.request_type for r in task.requests)
        assert task.perfect_trace() is not None
    assert min(lengths) >= 8 and max(lengths) <= 20
    assert set(kinds) == REQUEST_TYPES


def test_the_perfect_trace_fits_every_stage_budget():
    """Each request's events: exactly the target number of calls per stage, one message
    per text-only stage (so the trace agent is OPTIMAL everywhere)."""
    for seed in range(40):
        task = LongSorting().generate(seed)
        decisions = task.perfect_trace().decisions()
        calls = sum(len(d.tool_calls) for d in decisions)
        says = sum(1 for d in decisions if d.say)
        action = [s for s in task.stages if not s.is_text_only()]
        assert calls == sum(s.target_tool_calls for s in action)
        assert says == sum(1 for s in task.stages if s.is_text_only())


def test_generated_chains_respect_rules_and_zone_capacity():
    for seed in range(60):
        task = LongSorting().generate(seed)
        zones, cubes = [], []
        where: dict[str, str] = {}
        for record in task.requests:
            p = record.parameters
            if record.request_type == "ForbidRule":
                (zones if p["kind"] == "areas" else cubes).append(p["name"])
                continue
            zone = p.get("zone") or p.get("target") or p.get("second")
            if zone is None:  # a question
                continue
            moved = p.get("objects") or [p["object"]]
            assert zone not in zones and not set(moved) & set(cubes), (seed, record)
            where.update({o: zone for o in moved})
            loads = collections.Counter(where.values())
            assert max(loads.values()) <= ZONE_CAPACITY, (seed, record)
        assert task.rules == [f"Never use {z}." for z in zones] + [
            f"Do not touch the {o}." for o in cubes]
