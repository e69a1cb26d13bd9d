"""The manifests of the built-in scenarios (strings only: listing imports nothing else)."""

from magma_core.scenarios.manifest import ScenarioManifest

CUBE = ScenarioManifest(
    id="cube",
    presets={
        "PickPlace": "magma_scenarios.cube.presets:PickPlace",
        "MovedCube": "magma_scenarios.cube.presets:MovedCube",
        "Machine": "magma_scenarios.cube.presets:Machine",
    },
    environments={"MagmaCube-v1": "magma_scenarios.cube.env"},
)

SORTING = ScenarioManifest(
    id="sorting",
    presets={
        name: f"magma_scenarios.sorting.presets:{name}"
        for name in ("SortAll", "Interruption", "NewZone", "GraspError", "Question", "TwoArms")
    }
    | {
        name: f"magma_scenarios.sorting.skill_presets:{name}"
        for name in ("SkillSortAll", "SkillQuestion", "SkillNewTarget", "SkillStop", "SkillTwoArms")
    },
    skills={
        "sort_all": "magma_scenarios.sorting.skills:SortAll",
        "clear_zone": "magma_scenarios.sorting.skills:ClearZone",
    },
    definitions={
        **{name: f"magma_scenarios.sorting.definitions:{name}"
           for name in ("LongSorting", "LongSortingJudged")},
        "RuleSorting": "magma_scenarios.sorting.rule_definitions:RuleSorting",
    },
    environments={
        "MagmaSorting-v1": "magma_scenarios.sorting.env",
        "MagmaSortingDuo-v1": "magma_scenarios.sorting.env",
    },
    suites={
        "smoke": "magma_scenarios.sorting:suites/smoke.yaml",
        "sorting": "magma_scenarios.sorting:suites/sorting.yaml",
    },
    transforms="magma_scenarios.sorting.bench_conditions",
)

BUTTONS = ScenarioManifest(
    id="buttons",
    presets={
        name: f"magma_scenarios.buttons.presets:{name}"
        for name in ("Sequence", "LightOut", "RedRule", "TwoRobots")
    },
    environments={
        "MagmaButtons-v1": "magma_scenarios.buttons.env",
        "MagmaButtonsDuo-v1": "magma_scenarios.buttons.env",
    },
)
