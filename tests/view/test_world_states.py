"""The engine records the world after each decision, and the store keeps it compactly."""

from __future__ import annotations

import json
import sqlite3

import pytest

from magma_core.simulation.executor.world import compact_state, world_state
from magma_core.store import RunStore
from magma_core.store.run_store import pack_world, unpack_world

pytestmark = pytest.mark.sim


def test_every_decision_has_a_world_state_and_the_scene_has_shapes(viewer_store):
    with RunStore(viewer_store / "magma.db") as store:
        record = store.episode_record("sorting", 0)
        world = store.episode_world("sorting", 0)
    assert len(world["states"]) == len(record["steps"]) + 1
    scene = world["scene"]["actors"]
    assert scene["red_cube"] == {"shape": "box", "half_size": [0.02, 0.02, 0.02],
                                 "color": [0.85, 0.1, 0.1, 1.0], "kind": "object"}
    assert scene["zone_a"]["kind"] == "zone" and scene["zone_a"]["half_size"][:2] == [0.06, 0.06]
    assert scene["table-workspace"]["kind"] == "table"
    assert "worlds" not in record and "scene" not in record  # the record JSON stays lean
    # after "place red_cube in zone_a" the cube rests inside zone_a, and not before
    place = next(i for i, s in enumerate(record["steps"])
                 if s["calls"] and s["calls"][0]["tool"] == "place")
    zone = world["states"][place + 1]["actors"]["zone_a"]
    for index, inside in ((0, False), (place + 1, True)):
        cube = world["states"][index]["actors"]["red_cube"]
        assert (abs(cube[0] - zone[0]) <= 0.06 and abs(cube[1] - zone[1]) <= 0.06) is inside
    picked = world["states"][place]["actors"]["red_cube"]  # held above the table after pick
    assert picked[2] > 0.05
    robot = world["states"][place]["robots"]["panda"]
    assert abs(robot["tcp"][0] - picked[0]) < 0.03 and abs(robot["tcp"][1] - picked[1]) < 0.03
    assert robot["links"][0][:2] == [-0.615, 0.0]  # the base


def test_reset_at_end_shows_in_the_states(viewer_store):
    """cube.Machine resets the world when its first stage ends: the state after the switch
    decision is the reset world (machine off), as the agent finds it."""
    with RunStore(viewer_store / "magma.db") as store:
        world = store.episode_world("machine", 0)
    assert [state["extra"]["machine_on"] for state in world["states"]] == [False] * len(world["states"])


def test_world_state_matches_the_simulator_after_a_run(viewer_store):
    """The last recorded state is the simulator's state, rounded to 0.1 mm."""
    from magma_core.agents import TraceAgent
    from magma_core.runs.loop import RunLoop
    from magma_core.scenarios import load_preset
    from magma_core.simulation.executor import Executor

    task = load_preset("cube.PickPlace")()
    with Executor(task, num_slots=1, seed=0) as executor:
        store = RunStore(viewer_store / "extra.db")
        store.open_run("r", "cube.PickPlace", {})
        RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r", episodes=1, seed=5).run()
        now = compact_state(executor.sim.save_slot(0).state)
        assert world_state(executor.sim, 0)["actors"] == now["actors"]
        stored = store.episode_world("r", 0)["states"][-1]
        store.close()
        # an extra-state change made by a tool shows in the state after that decision
        executor.reset_slot(0, 7)
        executor.submit({0: {"tool_calls": [{"name": "switch_machine", "arguments": {"on": True}}]}})
        flags = [w["extra"]["machine_on"] for w in executor.record(0).worlds]
        assert flags == [False, True]
    assert stored["actors"] == now["actors"]
    assert stored["articulations"]["panda"]["qpos"] == now["articulations"]["panda"]["qpos"]


def test_world_states_are_compact(viewer_store):
    conn = sqlite3.connect(viewer_store / "magma.db")
    rows = conn.execute(
        "SELECT w.run_name, length(w.states), e.decisions FROM episode_worlds w "
        "JOIN episodes e USING (run_name, episode)"
    ).fetchall()
    conn.close()
    for name, size, decisions in rows:
        assert size < 400 * (decisions + 1), (name, size, decisions)  # < 400 bytes a state


def test_pack_round_trip():
    world = {"scene": {"actors": {"a": {"kind": "zone"}}}, "states": [None, {"actors": {"a": [1.5]}}]}
    assert unpack_world(*pack_world(world)) == json.loads(json.dumps(world))


def test_stand_in_simulators_without_snapshots_give_none():
    class Bare:
        pass

    assert world_state(Bare(), 0) is None
    state = {"actors": {"cube": [[0.1, 0.2, 0.02, 1, 0, 0, 0, 9, 9, 9, 9, 9, 9]]},
             "articulations": {"arm": [[0] * 13 + [0.5, 0.25] + [7, 7]]},
             "magma_extra_state": {"flag": [True], "level": [[0.123456, 2.0]]}}
    assert compact_state(state) == {
        "actors": {"cube": [0.1, 0.2, 0.02, 1.0, 0.0, 0.0, 0.0]},
        "articulations": {"arm": {"pose": [0.0] * 7, "qpos": [0.5, 0.25]}},
        "extra": {"flag": True, "level": [0.1235, 2.0]},
    }
