"""``sorting.RuleSorting``: rules given once and followed later (the templates' definition).

Its constructor takes the arguments ``magma run sorting.RuleSorting --num-cubes 5
--max-stages 10`` passes (checked against the annotations)."""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import InitializationParameters, TaskDefinition, TaskState
from magma_scenarios.sorting.requests import ForbidRule, SortingRules
from magma_scenarios.sorting.rule_requests import (
    ColourRule,
    CubeRule,
    DefaultRule,
    ForbiddenZoneRequest,
    GuardedSortCube,
    SortByRule,
    VagueRequest,
)
from magma_scenarios.sorting.tools import SortingTools
from magma_scenarios.sorting.world import COLORS, ENV_ID, cube_names, zone_names

NUM_ZONES = 3


class RuleSorting(TaskDefinition):
    """Sort ``num_cubes`` cubes over three zones by rules the user gives along the way."""

    maniskill_env_id = ENV_ID
    Tools_cls = SortingTools
    RuleRenderer_cls = SortingRules
    randomized_config_path = "randomization.yaml"
    max_target_tool_calls = 30

    def __init__(self, num_cubes: int = 4, max_stages: int = 12, say_only: bool = True) -> None:
        if not 2 <= num_cubes <= len(COLORS):
            raise ValueError(f"num_cubes must be between 2 and {len(COLORS)}, got {num_cubes}")
        cubes, zones = cube_names(num_cubes), zone_names(NUM_ZONES)
        super().__init__(
            situation_init=SituationInit({"objects": cubes, "areas": zones}),
            starting_state=TaskState(
                attributes={"objects": cubes, "areas": zones},
                relations={"object_type": {c: c.removesuffix("_cube") for c in cubes},
                           "type_area": {}, "object_area": {c: None for c in cubes},
                           "object_rule": {}},
            ),
            initialization_parameters=InitializationParameters(
                env_options={"num_cubes": num_cubes, "num_zones": NUM_ZONES}),
            active_requests=[ColourRule(), CubeRule(), DefaultRule(), SortByRule(), GuardedSortCube(),
                             ForbidRule(), VagueRequest(say_only), ForbiddenZoneRequest(say_only)],
            max_stages=max_stages,
            name="RuleSorting",
        )
