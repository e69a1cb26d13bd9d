"""Generated tasks to JSON and back: the same task, byte for byte; bad specs refused."""

from __future__ import annotations

import json

import pytest

from magma_core.simulation.randomizer import SpecGenerator, randomize_task
from magma_core.simulation.tasks import BaseRequest, GeneratedTask, task_from_json, task_to_json
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.sorting.definitions import LongSorting, LongSortingJudged


@pytest.mark.parametrize("seed", [0, 7, 42])
def test_json_round_trip_is_identical(seed):
    task = LongSortingJudged().generate(seed)
    text = task_to_json(task)
    again = task_from_json(text)
    assert task_to_json(again) == text
    assert isinstance(again, GeneratedTask)
    assert [type(s) for s in again.stages] == [type(s) for s in task.stages]
    assert [s.request_type for s in again.stages] == [s.request_type for s in task.stages]
    assert [s.target_tool_calls for s in again.stages] == [s.target_tool_calls for s in task.stages]
    assert again.perfect_trace().to_dict() == task.perfect_trace().to_dict()
    assert again.definition is LongSortingJudged
    assert again.initialization_parameters == task.initialization_parameters
    again.validate()


def test_the_randomization_mapping_travels_in_the_spec():
    task = randomize_task(LongSorting().generate(3), seed=3)
    mapping = task.randomization
    assert mapping == SpecGenerator(3).generate_random_spec(task).to_dict()
    assert task_from_json(task_to_json(task)).randomization == mapping
    assert LongSorting().generate(3).randomization is None


def test_bad_specs_are_refused_with_a_reason():
    spec = LongSorting().generate(1).to_spec()
    with pytest.raises(ValueError, match="JSON"):
        task_from_json("{not json")
    with pytest.raises(ValueError, match="format"):
        GeneratedTask.from_spec({**spec, "format": "other/1"})
    with pytest.raises(ValueError, match="unknown"):
        GeneratedTask.from_spec({**spec, "extra": 1})
    with pytest.raises(TypeError, match="BaseToolsAPI"):
        GeneratedTask.from_spec({**spec, "tools": "magma_core.simulation.tasks:TaskState"})
    with pytest.raises(ValueError, match="Cannot load"):
        GeneratedTask.from_spec({**spec, "tools": "os:no_such_thing"})
    bad_stage = json.loads(json.dumps(spec))
    bad_stage["stages"][0]["spec"]["type"] = "magma_core.simulation.tasks:TaskState"
    with pytest.raises(TypeError, match="BaseTaskStage"):
        GeneratedTask.from_spec(bad_stage)
    with pytest.raises(TypeError):
        GeneratedTask.from_spec([spec])


class FlaggedStage(ObjectsToZones):
    """A stage whose spec does not record its answer flag (it always sets it)."""

    def __init__(self, zone: str) -> None:
        self.zone = zone
        super().__init__({"red_cube": zone}, f"Put the red_cube in {zone}.", True)

    def _to_spec_arguments(self):
        return {"zone": self.zone}


class Flagging(BaseRequest):
    def sample_parameters(self, state, rng):
        return {"zone": rng.choice(["zone_a", "zone_b"])}

    def create_stages(self, state, params):
        return [FlaggedStage(params["zone"])]


def test_materialised_flags_survive_a_round_trip_even_when_a_stage_spec_omits_them():
    definition = LongSorting(active_requests=[Flagging()], max_stages=4)
    task = definition.generate(0)
    assert [type(s).__name__ for s in task.stages] == ["FlaggedStage", "CompletionAnswerStage"] * 2
    again = task_from_json(task_to_json(task))
    assert not any(s.stage_input.flag_answer_to_user for s in again.stages)
    again.validate()  # an EmptyInstruction after a flagged stage would be refused
    assert task_to_json(again) == task_to_json(task)
