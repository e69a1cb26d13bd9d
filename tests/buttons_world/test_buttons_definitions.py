"""The buttons definitions: generated chains stay within the panel's press record, the
benchmark transforms keep traces and goals in step, generated tasks run OPTIMAL."""

from __future__ import annotations

import pytest

import magma_scenarios.buttons.env  # noqa: F401  (registers the world)
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.bench.conditions import CONDITIONS, transform
from magma_core.bench.task_spec import task_to_spec
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.scenarios import get_scenario
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import RunStore
from magma_scenarios.buttons import bench_conditions
from magma_scenarios.buttons.definitions import PanelTasks, PanelTasksJudged
from magma_scenarios.buttons.world import MAX_PRESSES


def _presses(spec):
    return [c["arguments"]["button"] for e in spec["perfect_trace"]["events"]
            if e["type"] == "tool_calls" for c in e["calls"]]


def test_the_manifest_registers_definitions_and_suite():
    manifest = get_scenario("buttons")
    assert set(manifest.definitions) == {"PanelTasks", "PanelTasksJudged"}
    assert "buttons" in manifest.suites


@pytest.mark.parametrize("definition", [PanelTasks(), PanelTasksJudged()])
def test_fifty_chains_fit_the_press_record_and_respect_rules(definition):
    kinds = set()
    for seed in range(50):
        spec = task_to_spec(definition.generate(seed))
        presses = _presses(spec)
        assert 0 < len(presses) <= MAX_PRESSES
        forbidden = {r["parameters"]["button"] for r in spec["requests"] if r["request_type"] == "ForbidButton"}
        assert not forbidden & set(presses)
        kinds |= {r["request_type"] for r in spec["requests"]}
    assert kinds == {"PressSequence", "SetLights", "ForbidButton", "LightsQuestion"}


def test_every_condition_applies_and_keeps_stages_and_trace_in_step():
    applied = dict.fromkeys(CONDITIONS, 0)
    for seed in range(40):
        clean = task_to_spec(PanelTasks().generate(seed))
        for condition in CONDITIONS:
            try:
                spec, interventions = transform(bench_conditions, condition, clean, {"at": 0, "lag": 0})
            except Exception:  # noqa: BLE001  (a condition may not apply to a seed)
                continue
            applied[condition] += 1
            bench_conditions._segments(spec)
            extra = len(_presses(spec)) - len(_presses(clean))
            assert extra == sum(i["type"] == "execution_error" for i in interventions)
    # a mission update needs no light setting after it: the rarest condition
    assert all(applied[c] >= 4 for c in CONDITIONS), applied


@pytest.mark.sim
def test_generated_panel_tasks_are_optimal_randomized(tmp_path):
    tasks = EpisodeTasks(PanelTasks(), randomized=True)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "buttons.PanelTasks", {})
    with PublicVocabularyExecutor(Executor(tasks.task(0), num_slots=1, seed=0)) as executor:
        summaries = ProceduralRunLoop(tasks, None, SlotTraceAgent(), executor, store, "r",
                                      episodes=2, seed=0).run()
    for s in summaries:
        assert s.status == "success", store.episode_record("r", s.episode)["reason"]
        assert s.stages_passed == s.stages_total == s.optimal
