"""Every kitchen preset is solved by its perfect trace with every stage OPTIMAL, and a
generated task too (randomized vocabulary), on the real simulator."""

from __future__ import annotations

import pytest

from magma_core.agents import TraceAgent
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.judge import Verdict
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import get_scenario, load_preset, register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import RunStore
from magma_scenarios.kitchen.definitions import LongKitchenJudged

pytestmark = pytest.mark.sim

PRESETS = [f"kitchen.{name}" for name in get_scenario("kitchen").presets]


class FactJudge:
    """Accepts an answer that states the rule's fact (``The answer says that <fact>.``)."""

    def __init__(self) -> None:
        self.calls = 0

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        self.calls += 1
        fact = rule.removeprefix("The answer says that ").removesuffix(".")
        ok = fact.lower() in answer.lower()
        return Verdict(ok=ok, reason="states the fact" if ok else "misses the fact")


@pytest.mark.parametrize("preset", PRESETS)
def test_perfect_trace_is_optimal(preset, tmp_path):
    task = load_preset(preset)()
    with Executor(task, num_slots=1, seed=0, judge=FactJudge()) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", preset, {})
        summaries = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                            episodes=1, seed=0).run()
        record = executor.record(0)
    (s,) = summaries
    assert s.status == "success", store.episode_record("r", s.episode)["reason"]
    assert s.stages_passed == s.stages_total == s.optimal
    calls = [c for step in record.steps for c in step.calls]
    assert calls and all(c.ok for c in calls if not c.injected)


def test_a_randomized_generated_task_is_optimal_and_judged(tmp_path):
    register_environments("kitchen")
    tasks = EpisodeTasks(LongKitchenJudged(), randomized=True)
    judge = FactJudge()
    engine = Executor(tasks.task(7), num_slots=1, seed=7, judge=judge)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "kitchen.LongKitchenJudged", {})
    with PublicVocabularyExecutor(engine) as executor:
        (s,) = ProceduralRunLoop(tasks, None, SlotTraceAgent(), executor, store, "r",
                                 episodes=1, seed=7).run()
    record = store.episode_record("r", 0)
    assert s.status == "success", record["reason"]
    assert s.stages_passed == s.stages_total == s.optimal
    assert record["randomization"]["tool_equivalence"]
    assert judge.calls > 0
