"""Generated long-horizon sorting tasks, randomized or not, solved by the trace agent on the
real simulator: every stage OPTIMAL; the record keeps each episode's mapping."""

from __future__ import annotations

import re

import pytest

from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.judge import Verdict
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.scenarios import get_scenario, load_preset, register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import RunStore
from magma_scenarios.sorting.definitions import LongSorting, LongSortingJudged

pytestmark = pytest.mark.sim

FACT = re.compile(r"^The answer says that (?P<fact>.+)\.$")


class FactJudge:
    """Accepts an answer that states the rule's fact (canonical names: the seam translates
    the agent's answer back before the engine judges it)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        self.calls.append((rule, question, answer))
        fact = FACT.match(rule)
        ok = bool(fact) and fact["fact"].lower() in answer.lower()
        return Verdict(ok=ok, reason="states the fact" if ok else "misses the fact")


class RecordingTraceAgent(SlotTraceAgent):
    """The slot trace agent, keeping every input it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[str] = []

    def decide(self, request_id, agent_input, candidate_index):
        self.inputs.append(agent_input.model_dump_json())
        return super().decide(request_id, agent_input, candidate_index)


CANONICAL = re.compile(r"(?<![A-Za-z0-9_])(red_cube|green_cube|blue_cube|yellow_cube|zone_a|zone_b|"
                       r"zone_c|pick|place|detect_objects)(?![A-Za-z0-9_])")


def _run(definition, randomized, episodes, tmp_path, slots=2, seed=0):
    register_environments("sorting")
    tasks = EpisodeTasks(definition, randomized=randomized)
    judge = FactJudge()
    engine = Executor(tasks.task(seed), num_slots=slots, seed=seed, judge=judge)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "sorting.LongSorting", {})
    agent = RecordingTraceAgent()
    with PublicVocabularyExecutor(engine) as executor:
        summaries = ProceduralRunLoop(tasks, None, agent, executor, store, "r",
                                      episodes=episodes, seed=seed).run()
    return store, summaries, judge, agent


def test_twenty_randomized_generated_tasks_are_optimal(tmp_path):
    store, summaries, judge, agent = _run(LongSortingJudged(), True, 20, tmp_path)
    assert len(summaries) == 20
    for s in summaries:
        record = store.episode_record("r", s.episode)
        assert s.status == "success", record["reason"]
        assert 8 <= s.stages_total <= 20
        assert s.stages_passed == s.stages_total == s.optimal
        mapping = record["randomization"]
        assert mapping is not None and mapping["tool_equivalence"]
        # the engine ran canonical names
        ran = {c["name"] for step in record["steps"] for c in step["decision"]["tool_calls"]}
        assert ran and ran <= {"pick", "place"}
    # the agent saw public names only, in every input of every episode
    leaks = [m.group(0) for text in agent.inputs for m in [CANONICAL.search(text)] if m]
    assert agent.inputs and leaks == []
    assert judge.calls, "the judged questions reached the judge"
    public_tools = {t["name"] for t in store.episode_record("r", 0)["randomization"]["tools"]}
    assert public_tools.isdisjoint({"pick", "place", "detect_objects", "add_area"})


def test_generated_tasks_without_randomization_are_optimal(tmp_path):
    store, summaries, _, agent = _run(LongSorting(), False, 4, tmp_path, seed=100)
    assert [s.status for s in summaries] == ["success"] * 4
    assert all(s.stages_passed == s.optimal for s in summaries)
    assert store.episode_record("r", 0)["randomization"] is None
    assert any(CANONICAL.search(text) for text in agent.inputs)  # the check above can fail


PRESETS = [f"{sid}.{name}" for sid in ("cube", "sorting") for name in get_scenario(sid).presets]


class PresetJudge:
    """The Question preset's judge: the (canonical) answer must place the blue cube in zone_a."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        ok = "blue cube is in zone_a" in answer
        return Verdict(ok=ok, reason="checked")


SKILL_CANONICAL = re.compile(CANONICAL.pattern.replace("detect_objects", "detect_objects|sort_all|"
                             "clear_zone|red|green|blue|yellow|color"))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_runs_optimal_randomized(preset, tmp_path):
    task = load_preset(preset)()
    tasks = EpisodeTasks(task, randomized=True)
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", preset, {})
    agent = RecordingTraceAgent()
    engine = Executor(task, num_slots=2, seed=0, judge=PresetJudge())
    with PublicVocabularyExecutor(engine) as executor:
        summaries = ProceduralRunLoop(tasks, task, agent, executor, store, "r",
                                      episodes=2, seed=0).run()
    for s in summaries:
        assert s.status == "success", store.episode_record("r", s.episode)["reason"]
        assert s.stages_passed == s.stages_total == s.optimal
    mappings = [store.episode_record("r", k)["randomization"] for k in (0, 1)]
    assert mappings[0] != mappings[1]  # each episode draws its own vocabulary
    if getattr(task, "skills", None):  # skills, their arguments and robot statuses: public too
        leaks = {m.group(0) for text in agent.inputs for m in SKILL_CANONICAL.finditer(text)}
        assert agent.inputs and leaks == set()
        assert all('"robot_statuses"' in text for text in agent.inputs)
