"""The warehouse on the real simulator: presets and generated tasks solved OPTIMAL by the
trace agents, occupancy kept in the world's state, refusals before motion, the jam."""

from __future__ import annotations

import pytest

import magma_scenarios.warehouse.env  # noqa: F401  (registers the world)
from magma_core.agents import TraceAgent
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.judge import Verdict
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import get_scenario, load_preset
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.simulation.tasks import PerfectTrace, ToolCallEvent, UserEvent
from magma_core.store import RunStore
from magma_scenarios.warehouse.definitions import WarehouseOrders
from magma_scenarios.warehouse.presets import MoveOrder
from magma_scenarios.warehouse.stages import Deliver

pytestmark = pytest.mark.sim

PRESETS = [f"warehouse.{name}" for name in get_scenario("warehouse").presets]


class FactJudge:
    """Accepts an answer that states the rule's fact."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        fact = rule.split("the fact is: ", 1)[-1].rstrip(".").lower()
        ok = fact in answer.lower()
        return Verdict(ok=ok, reason="states the fact" if ok else "misses it")


def _run(task, trace, tmp_path, episodes=1):
    with Executor(task, num_slots=1, seed=0, judge=FactJudge()) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", task.name or "t", {})
        summaries = RunLoop(task, TraceAgent(trace), executor, store, "r", episodes=episodes, seed=0).run()
    return store, summaries


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_is_optimal_randomized(preset, tmp_path):
    task = load_preset(preset)()
    tasks = EpisodeTasks(task, randomized=True)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", preset, {})
    engine = Executor(task, num_slots=1, seed=0, judge=FactJudge())
    with PublicVocabularyExecutor(engine) as executor:
        summaries = ProceduralRunLoop(tasks, task, SlotTraceAgent(), executor, store, "r",
                                      episodes=1, seed=0).run()
    (s,) = summaries
    record = store.episode_record("r", s.episode)
    assert s.status == "success", record["reason"]
    assert s.stages_passed == s.stages_total == s.optimal
    assert record["randomization"]["tool_equivalence"]


def test_occupancy_follows_the_boxes_through_a_swap(tmp_path):
    task = load_preset("warehouse.Swap")()
    store, (s,) = _run(task, task.perfect_trace(), tmp_path)
    record = store.episode_record("r", s.episode)
    updates = [u for step in record["steps"] for c in step["calls"] for u in c["state_updates"]]
    final = {}
    for u in updates:
        final[u["path"][1]] = u["value"]
    # red (0) now in shelf_b1, green (2) in shelf_a1, both hand-over slots empty again
    assert final["occupant_shelf_b1"] == 0 and final["occupant_shelf_a1"] == 2
    assert final["occupant_handover_1"] == final["occupant_handover_2"] == -1
    both = [step for step in record["steps"] if len(step["calls"]) == 2]
    assert len(both) == 4 and all(c["ok"] for step in both for c in step["calls"])


class _Patient(MoveOrder):
    """MoveOrder with room for refused calls (no deadline)."""

    stages = [Deliver({"red_box": "dock_a"}, MoveOrder.TEXT, 4)]


def test_refusals_come_before_motion_with_a_public_reason(tmp_path):
    task = _Patient()
    trace = PerfectTrace([
        UserEvent(MoveOrder.TEXT),
        ToolCallEvent([ToolCall("pick", {"object": "green_box"}, "panda-0")]),  # out of reach
        ToolCallEvent([ToolCall("pick", {"object": "red_box"}, "panda-0"),
                       ToolCall("place", {"slot": "shelf_a2"}, "panda-1")]),  # holds nothing
        ToolCallEvent([ToolCall("place", {"slot": "shelf_a2"}, "panda-0")]),  # occupied
        ToolCallEvent([ToolCall("place", {"slot": "dock_a"}, "panda-0")]),
    ])
    store, (s,) = _run(task, trace, tmp_path)
    calls = [c for step in store.episode_record("r", s.episode)["steps"] for c in step["calls"]]
    messages = [(c["ok"], c["message"]) for c in calls]
    assert messages[0] == (False, "The green_box is in shelf_b1, out of panda-0's reach; panda-0 "
                                  "reaches shelf_a1, shelf_a2, dock_a, handover_1, handover_2.")
    assert messages[1][0] and messages[2] == (False, "panda-1 holds nothing; pick a box first.")
    assert messages[3] == (False, "shelf_a2 is occupied by the blue_box.")
    assert all(c["message_is_public"] for c in calls if not c["ok"])
    assert calls[-1]["ok"]


def test_a_jam_holds_its_arm_until_cleared(tmp_path):
    task = load_preset("warehouse.Jammed")()
    store, (s,) = _run(task, task.perfect_trace(), tmp_path)
    assert s.status == "success" and s.optimal == s.stages_total
    calls = [c for step in store.episode_record("r", s.episode)["steps"] for c in step["calls"]]
    first, clear = calls[0], calls[1]
    assert not first["ok"] and first["injected"] and first["forgiven"]
    assert "jammed" in first["message"] and first["failure_flag"] == "injection_error"
    assert clear["tool"] == "clear_jam" and clear["message"] == "panda-0's jam is cleared."


def test_generated_tasks_are_optimal_randomized(tmp_path):
    tasks = EpisodeTasks(WarehouseOrders(), randomized=True)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "warehouse.WarehouseOrders", {})
    with PublicVocabularyExecutor(Executor(tasks.task(0), num_slots=1, seed=0)) as executor:
        summaries = ProceduralRunLoop(tasks, None, SlotTraceAgent(), executor, store, "r",
                                      episodes=2, seed=0).run()
    for s in summaries:
        assert s.status == "success", store.episode_record("r", s.episode)["reason"]
        assert s.stages_passed == s.stages_total == s.optimal >= 8
