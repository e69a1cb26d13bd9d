"""The sorting scenario's task definitions: long-horizon tasks generated from requests.

``LongSorting`` asks questions validated SAY_ONLY (runs without a judge);
``LongSortingJudged`` has a judge check each answer against the table's true state.
Both ship the name-randomization config ``randomization.yaml`` (``--randomized``).
"""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import InitializationParameters, TaskDefinition, TaskState
from magma_scenarios.sorting.requests import (
    ChangeTarget,
    ClearZone,
    ForbidRule,
    SortColourFamily,
    SortCube,
    SortingRules,
    TableQuestion,
)
from magma_scenarios.sorting.tools import SortingTools
from magma_scenarios.sorting.world import COLORS, ENV_ID, cube_names, zone_names

NUM_CUBES, NUM_ZONES = 4, 3


def starting_state() -> TaskState:
    """Every cube on the table (in no zone), typed by its colour."""
    cubes = cube_names(NUM_CUBES)
    return TaskState(
        attributes={"objects": cubes, "areas": zone_names(NUM_ZONES)},
        relations={
            "object_type": dict(zip(cubes, list(COLORS), strict=False)),
            "type_area": {},
            "object_area": {c: None for c in cubes},
        },
    )


class LongSorting(TaskDefinition):
    """Sort four cubes over three zones through a chain of requests (8 to 20 stages)."""

    name = "LongSorting"
    maniskill_env_id = ENV_ID
    Tools_cls = SortingTools
    situation_init = SituationInit({"objects": cube_names(NUM_CUBES), "areas": zone_names(NUM_ZONES)})
    initialization_parameters = InitializationParameters(
        env_options={"num_cubes": NUM_CUBES, "num_zones": NUM_ZONES}
    )
    starting_state = starting_state()
    active_requests = [SortCube(), SortColourFamily(), ClearZone(), ForbidRule(),
                       TableQuestion(judged=False), ChangeTarget()]
    RuleRenderer_cls = SortingRules
    randomized_config_path = "randomization.yaml"
    max_target_tool_calls = 40
    max_stages = 20


class LongSortingJudged(LongSorting):
    """``LongSorting`` whose questions a judge validates against the table (needs ``--judge``)."""

    name = "LongSortingJudged"
    active_requests = [SortCube(), SortColourFamily(), ClearZone(), ForbidRule(),
                       TableQuestion(judged=True), ChangeTarget()]


class ShortSorting(LongSorting):
    """One cube to one zone (two stages: pick, place, then say it is done): a task short
    enough for a 135M model to learn from generated data (``benchmarks/data_value.py``).
    Its held-out suite ``short_heldout`` uses seeds from 1000; train on seeds below."""

    name = "ShortSorting"
    active_requests = [SortCube()]
    max_target_tool_calls = 6
    max_stages = 2
