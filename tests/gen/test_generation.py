"""``magma gen`` on the real simulator: trees as stored, siblings reproduced from snapshots,
scores, caps, and a kill -9 resume with nothing lost or duplicated."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from gen.kill_resume import gen_command, kill_after, run
from magma_core.agents.base import Agent
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.store import scores as sc

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from magma_core.agents import NoisyTraceAgent
    from magma_core.scenarios import load_preset
    from magma_core.simulation.executor import Executor

    task = load_preset("cube.PickPlace")()
    folder = tmp_path_factory.mktemp("gen")
    store = GenerationStore(folder / "magma.db")
    store.open_generation("g", "cube.PickPlace", {})
    executor = Executor(task, num_slots=4, seed=0, backend="cpu")
    agent = NoisyTraceAgent(task.perfect_trace(), noise=0.5, seed=1)
    settings = GenSettings(branches=3, max_nodes=45, trees=2, max_per_stage=2)
    summary = Generator(task, agent, executor, store, "g", settings).run()
    yield store, executor, summary, settings
    executor.close()
    store.close()


def test_the_trees_are_stored_with_their_links(generated):
    store, _, summary, settings = generated
    situations = {s.id: s for s in store.situations("g")}
    candidates = store.candidates("g")
    assert summary["candidates"] == len(candidates) == settings.max_nodes
    assert {t["tree"] for t in store.trees("g")} == {0, 1}
    per_situation = Counter((c.situation, c.candidate_index) for c in candidates)
    assert max(per_situation.values()) == 1
    assert all(index < settings.branches for _, index in per_situation)
    for c in candidates:
        assert c.situation in situations and situations[c.situation].tree == c.tree
        if c.next_situation is not None:
            child = situations[c.next_situation]
            assert child.parent == c.id and child.depth == situations[c.situation].depth + 1
            assert child.agent_input["memory"] == c.memory  # the agent's memory carries on
        if c.episode_status in ("success", "failed", "invalid"):
            assert c.next_situation is None
    assert summary["successes"] > 0
    roots = [s for s in situations.values() if s.parent is None]
    assert all(s.agent_input["instruction"]["type"] == "user" for s in roots)
    assert all(s.agent_input["num_outputs"] == settings.branches for s in situations.values())


def test_stage_finishers_continue_at_most_k_per_stage(generated):
    store, _, _, settings = generated
    situations = {s.id: s for s in store.situations("g")}
    started = Counter()
    for c in store.candidates("g"):
        if c.next_situation is not None and c.end_status != sc.ONGOING:
            if situations[c.next_situation].status != "parked":
                started[(c.tree, c.stage)] += 1
    assert started and max(started.values()) <= settings.max_per_stage


def test_stored_scores_match_the_tree(generated):
    store, _, _, _ = generated
    candidates = store.candidates("g")
    results = sc.subtree_results(
        sc.ScoredCandidate(c.id, c.situation, c.stage, c.end_status, c.next_situation) for c in candidates)
    for c in candidates:
        assert sc.results_from_json(c.score) == results[c.id]
    winners = [c for c in candidates if c.episode_status == "success"]
    assert all(sc.score(sc.results_from_json(c.score)) > 0 for c in winners)


def test_siblings_with_the_same_decision_recorded_the_same_outcome(generated):
    store, _, _, _ = generated
    groups: dict[tuple, list] = {}
    for c in store.candidates("g"):
        if c.execution is not None:
            groups.setdefault((c.situation, json.dumps(c.output, sort_keys=True)), []).append(c)
    twins = [g for g in groups.values() if len(g) > 1]
    assert twins  # noisy-trace repeats the reference often enough
    for group in twins:
        executions = [c.execution for c in group]
        assert all("slot" not in e for e in executions)  # where it ran is not stored
        assert all(e == executions[0] for e in executions)
        assert len({c.episode_status for c in group}) == 1


def test_restored_branches_reproduce_their_siblings_recorded_outcomes(generated):
    from magma_core.protocol.agent import AgentDecision

    store, executor, _, _ = generated
    checked = 0
    for c in store.candidates("g"):
        if c.execution is None or checked >= 6:
            continue
        snapshot = executor.snapshot_from_bytes(store.snapshot_blob("g", c.situation))
        executor.restore(3 - checked % 4, snapshot)
        slot = 3 - checked % 4
        replay = executor.submit({slot: AgentDecision.model_validate(c.output).to_decision()})[slot]
        recorded = dict(c.execution)
        again = replay.to_dict()
        for d in (recorded, again):
            d.pop("slot", None), d.pop("next_view", None), d.pop("step_index", None)
        assert json.loads(json.dumps(again, default=str)) == recorded
        checked += 1
    assert checked == 6


class _OneAtATime(Agent):
    """An agent that answers one candidate per input, and records what it was asked."""

    def __init__(self, inner):
        self.inner, self.asked = inner, []

    def info(self):
        from magma_core.protocol.agent import AgentInfo

        return AgentInfo(agent_id="one", agent_version="0", capabilities={"num_outputs": False})

    def respond(self, request):
        self.asked.append([i.num_outputs for i in request.inputs])
        return self.inner.respond(request)


def test_an_agent_without_num_outputs_is_asked_once_per_candidate(generated):
    from magma_core.agents import NoisyTraceAgent

    store, executor, _, _ = generated
    store.open_generation("single", "cube.PickPlace", {})
    agent = _OneAtATime(NoisyTraceAgent(executor.task.perfect_trace(), noise=0.5, seed=2))
    settings = GenSettings(branches=3, max_nodes=12, trees=1)
    Generator(executor.task, agent, executor, store, "single", settings).run()
    candidates = store.candidates("single")
    assert len(candidates) == 12
    assert {n for asked in agent.asked for n in asked} == {1}
    by_situation = Counter(c.situation for c in candidates)
    indices = {c.situation: sorted(x.candidate_index for x in candidates if x.situation == c.situation)
               for c in candidates}
    assert all(indices[s] == list(range(n)) for s, n in by_situation.items())


def _gen_cmd(folder: Path, nodes: int) -> list[str]:
    return gen_command(folder, "sorting.SortAll", nodes)


def test_a_killed_generation_resumes_with_nothing_lost_or_duplicated(tmp_path):
    db = tmp_path / "magma.db"
    (tmp_path / "keep.txt").write_text("never wiped")
    before = kill_after(_gen_cmd(tmp_path, 40), db, 12, timeout=180)
    assert 12 <= before < 40
    done = run(_gen_cmd(tmp_path, 40), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "keep.txt").read_text() == "never wiped"
    with GenerationStore(db) as store:
        candidates = store.candidates("k")
        situations = {s.id: s for s in store.situations("k")}
    assert len(candidates) == 40
    assert len({c.id for c in candidates}) == 40
    assert len({(c.situation, c.candidate_index) for c in candidates}) == 40
    for c in candidates:  # every link intact, every non-root situation has its candidate
        assert c.situation in situations
        if c.next_situation is not None:
            assert situations[c.next_situation].parent == c.id
    ids = {c.id for c in candidates}
    assert all(s.parent in ids for s in situations.values() if s.parent is not None)
    assert sorted(s.id for s in situations.values()) == list(range(len(situations)))
