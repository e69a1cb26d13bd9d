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
           for name in ("LongSorting", "LongSortingJudged", "ShortSorting")},
        "RuleSorting": "magma_scenarios.sorting.rule_definitions:RuleSorting",
        **{name: f"magma_scenarios.sorting.splits:{name}"
           for name in ("ShortSortingTrain", "PairSortingTrain", "PerturbedPairSortingTrain", "PairSortingHeldOut",
                        "ShortSortingCompositional",
                        "LongSortingTrain")},
    },
    environments={
        "MagmaSorting-v1": "magma_scenarios.sorting.env",
        "MagmaSortingDuo-v1": "magma_scenarios.sorting.env",
    },
    suites={
        "smoke": "magma_scenarios.sorting:suites/smoke.yaml",
        "sorting": "magma_scenarios.sorting:suites/sorting.yaml",
        "short_heldout": "magma_scenarios.sorting:suites/short_heldout.yaml",
        "split_compositional": "magma_scenarios.sorting:suites/split_compositional.yaml",
        "split_perturbed": "magma_scenarios.sorting:suites/split_perturbed.yaml",
        "split_long": "magma_scenarios.sorting:suites/split_long.yaml",
    },
    transforms="magma_scenarios.sorting.bench_conditions",
)

BUTTONS = ScenarioManifest(
    id="buttons",
    presets={
        name: f"magma_scenarios.buttons.presets:{name}"
        for name in ("Sequence", "LightOut", "RedRule", "TwoRobots")
    },
    definitions={
        name: f"magma_scenarios.buttons.definitions:{name}"
        for name in ("PanelTasks", "PanelTasksJudged")
    },
    environments={
        "MagmaButtons-v1": "magma_scenarios.buttons.env",
        "MagmaButtonsDuo-v1": "magma_scenarios.buttons.env",
    },
    suites={"buttons": "magma_scenarios.buttons:suites/buttons.yaml"},
    transforms="magma_scenarios.buttons.bench_conditions",
)

WAREHOUSE = ScenarioManifest(
    id="warehouse",
    presets={
        name: f"magma_scenarios.warehouse.presets:{name}"
        for name in ("MoveOrder", "TwoOrders", "HandOver", "Swap", "Jammed", "Stock")
    },
    definitions={
        name: f"magma_scenarios.warehouse.definitions:{name}"
        for name in ("WarehouseOrders", "WarehouseOrdersJudged")
    },
    environments={"MagmaWarehouse-v1": "magma_scenarios.warehouse.env"},
    suites={"warehouse": "magma_scenarios.warehouse:suites/warehouse.yaml"},
    transforms="magma_scenarios.warehouse.bench_conditions",
)

KITCHEN = ScenarioManifest(
    id="kitchen",
    presets={
        name: f"magma_scenarios.kitchen.presets:{name}"
        for name in ("FetchFromDrawer", "PutAwayCups", "LatchedBox", "WhatIsInside", "DrawerRule",
                     "SkillFetch")
    },
    skills={"fetch": "magma_scenarios.kitchen.skills:Fetch"},
    definitions={
        name: f"magma_scenarios.kitchen.definitions:{name}"
        for name in ("LongKitchen", "LongKitchenJudged")
    },
    environments={"MagmaKitchen-v1": "magma_scenarios.kitchen.env"},
    suites={"kitchen": "magma_scenarios.kitchen:suites/kitchen.yaml",
            "split_other_domain": "magma_scenarios.kitchen:suites/split_other_domain.yaml"},
    transforms="magma_scenarios.kitchen.bench_conditions",
)
