"""The warehouse without the simulator: generated chains are valid plans, the benchmark
transforms keep them valid, the manifest registers everything."""

from __future__ import annotations

import pytest

from magma_core.bench.conditions import CONDITIONS, transform
from magma_core.bench.task_spec import task_to_spec
from magma_core.scenarios import get_scenario
from magma_scenarios.warehouse import bench_conditions, plans
from magma_scenarios.warehouse.definitions import WarehouseOrders, WarehouseOrdersJudged
from magma_scenarios.warehouse.stages import Deliver
from magma_scenarios.warehouse.world import HANDOVERS, REACH, SLOTS, side_of


def _calls(spec):
    return bench_conditions._calls(spec["perfect_trace"]["events"])


def test_the_manifest_registers_the_warehouse():
    manifest = get_scenario("warehouse")
    assert set(manifest.presets) == {"MoveOrder", "TwoOrders", "HandOver", "Swap", "Jammed", "Stock"}
    assert set(manifest.definitions) == {"WarehouseOrders", "WarehouseOrdersJudged"}
    assert manifest.suites == {"warehouse": "magma_scenarios.warehouse:suites/warehouse.yaml"}


def test_reach_only_the_hand_over_slots_are_shared():
    shared = set(REACH["panda-0"]) & set(REACH["panda-1"])
    assert shared == set(HANDOVERS)
    assert set(REACH["panda-0"]) | set(REACH["panda-1"]) == set(SLOTS)


def test_replay_refuses_what_the_world_refuses():
    with pytest.raises(ValueError, match="cannot pick"):
        plans.replay([plans.pick("panda-1", "red_box")])  # red is on panda-0's shelf
    with pytest.raises(ValueError, match="cannot place"):
        plans.replay([plans.pick("panda-0", "red_box"), plans.place("panda-0", "shelf_a2")])  # occupied
    with pytest.raises(ValueError, match="gripper"):
        plans.replay([plans.pick("panda-0", "red_box")])
    moved = plans.replay([c for d in plans.move("red_box", "shelf_a1", "dock_b", "handover_2") for c in d])
    assert moved["red_box"] == "dock_b"


@pytest.mark.parametrize("definition", [WarehouseOrders(), WarehouseOrdersJudged()])
def test_fifty_generated_traces_are_valid_plans(definition):
    kinds = set()
    for seed in range(50):
        task = definition.generate(seed)
        spec = task_to_spec(task)
        where = plans.replay(_calls(spec))  # raises on a refused call
        assert sorted(s for s in where.values()) == sorted(set(where.values()))  # one box per slot
        assert not set(where.values()) & set(HANDOVERS)  # hand-over slots end empty
        kinds |= {r["request_type"] for r in spec["requests"]}
        for stage in task.stages:
            if isinstance(stage, Deliver) and stage.deadline is not None:
                assert stage.calls <= stage.deadline <= stage.calls + 2
        # every stage's calls are in the trace, decision by decision
        assert sum(map(len, bench_conditions._segments(spec))) > 0
    assert kinds == {"MoveOrder", "Transfer", "SwapBoxes", "StockQuestion"}


def test_every_condition_keeps_the_trace_valid():
    applied = dict.fromkeys(CONDITIONS, 0)
    for seed in range(12):
        clean = task_to_spec(WarehouseOrders().generate(seed))
        for condition in CONDITIONS:
            try:
                spec, interventions = transform(bench_conditions, condition, clean, {"at": 0, "lag": 0})
            except Exception:  # noqa: BLE001  (a condition may not apply to a seed)
                continue
            applied[condition] += 1
            plans.replay(_calls(spec))
            bench_conditions._segments(spec)  # stages and trace still line up
            if "execution_error" in {i["type"] for i in interventions}:
                names = [c[1] for c in _calls(spec)]
                assert "clear_jam" in names
                jammed = [s for s in spec["stages"] if s["spec"]["type"].endswith("Deliver")
                          and s["spec"]["arguments"]["errors"]]
                assert len(jammed) == 1 and jammed[0]["spec"]["arguments"]["extra_calls"] == 1
    assert all(applied[c] >= 6 for c in CONDITIONS), applied


def test_a_mission_update_moves_the_goal_and_the_trace_together():
    for seed in range(20):
        clean = task_to_spec(WarehouseOrders().generate(seed))
        try:
            spec, (update,) = transform(bench_conditions, "mission_update", clean, {"at": 0})
        except Exception:  # noqa: BLE001
            continue
        stage = spec["stages"][update["relevant_at_stage"]]["spec"]["arguments"]
        before = clean["stages"][update["relevant_at_stage"]]["spec"]["arguments"]["placements"]
        changed = {b: s for b, s in stage["placements"].items() if before[b] != s}
        assert len(changed) == 1
        (box, new), = changed.items()
        assert side_of(new) == side_of(before[box])
        assert "Change of plan" in spec["stages"][update["injected_at_stage"]]["spec"]["arguments"]["instruction"]
        assert ("panda-0" if side_of(new) == "panda-0" else "panda-1", "place", {"slot": new}) in _calls(spec)
        return
    pytest.fail("no seed took a mission update")
