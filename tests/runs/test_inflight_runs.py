"""In-flight slots on the real engine: records independent of arrival order, one slot's
trouble stays its own, and a run stops resumably only when the agent is down for every slot."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from magma_core.agents import TraceAgent
from magma_core.agents.loopback import LoopbackAgentServer
from magma_core.protocol.agent import AgentRequest
from magma_core.runs import Pacing, RunSpec, run
from magma_core.runs.assembly import load_task
from magma_core.store import open_store

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


class RandomDelayTrace(TraceAgent):
    """The trace agent answering each request after a random delay (seeded)."""

    def __init__(self, trace, seed: int, most_s: float = 0.05) -> None:
        super().__init__(trace)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.most_s = most_s

    def respond(self, request: AgentRequest):
        with self.lock:
            delay = self.rng.uniform(0, self.most_s)
        time.sleep(delay)
        return super().respond(request)


def _records(out, name: str) -> dict[int, dict]:
    with open_store(out, create=False) as store:
        summaries = store.episodes(name)
        records = {s.episode: store.episode_record(name, s.episode) for s in summaries}
    for record in records.values():
        record.pop("timings", None)
        record.pop("slot", None)
        record["agent"].pop("latency_s", None)
        record["agent"].pop("per_decision", None)
        for step in record["steps"]:
            step.pop("timings", None)
    return records


def _run_with(agent, tmp_path, name: str, **kwargs):
    from magma_core.runs import assembly

    original = assembly.build_run_agent
    assembly.build_run_agent = lambda *a, **k: agent
    try:
        return run(RunSpec(PRESET, episodes=6, slots=3, seed=5, out=tmp_path, name=name, **kwargs))
    finally:
        assembly.build_run_agent = original


def test_records_do_not_depend_on_the_order_answers_arrive_in(tmp_path):
    trace = load_task(PRESET).perfect_trace()
    results = {}
    for seed in (1, 2):
        result = _run_with(RandomDelayTrace(trace, seed), tmp_path, f"random-{seed}")
        assert result.ok and len(result.summaries) == 6
        results[seed] = _records(tmp_path, f"random-{seed}")
    lockstep = _run_with(TraceAgent(trace), tmp_path, "lockstep", pacing=Pacing(lockstep=True))
    assert lockstep.ok
    assert results[1] == results[2] == _records(tmp_path, "lockstep")
    assert sorted(results[1]) == list(range(6))
    assert [r["seed"] for _, r in sorted(results[1].items())] == [5, 6, 7, 8, 9, 10]


def test_one_slots_outage_does_not_stop_the_others(tmp_path):
    trace = load_task(PRESET).perfect_trace()
    failures = {"left": 6}
    lock = threading.Lock()

    def flaky_slot0(request, answer):  # slot 0's inputs get HTTP 503 six times
        with lock:
            if request["inputs"][0]["id"] == 0 and failures["left"] > 0:
                failures["left"] -= 1
                return 503, b"busy"
        return None

    pacing = Pacing(retry_backoff_s=0.05, max_backoff_s=0.2, max_outage_s=30)
    with LoopbackAgentServer(TraceAgent(trace), reply=flaky_slot0) as server:
        result = run(RunSpec(PRESET, agent=server.url, episodes=4, slots=2, out=tmp_path,
                             name="flaky", pacing=pacing))
    assert failures["left"] == 0
    assert result.ok and [s.status for s in result.summaries] == ["success"] * 4
    assert all(s.decisions == 3 for s in result.summaries)  # the 503s were not decisions


def test_the_agents_own_timeout_error_is_that_slots_decision(tmp_path):
    trace = load_task(PRESET).perfect_trace()

    def own_error(request, answer):
        first = request["inputs"][0]
        if first["id"] == 0:
            return 200, json.dumps([{
                "request_id": request["request_id"], "source_id": 0, "candidate_index": 0,
                "status": "error", "memory": {}, "internal_steps": [],
                "error": {"code": "timeout", "message": "the model timed out"}}]).encode()
        return None

    with LoopbackAgentServer(TraceAgent(trace), reply=own_error) as server:
        result = run(RunSpec(PRESET, agent=server.url, episodes=4, slots=2, out=tmp_path,
                             name="own-error"))
    assert not result.failures
    by_status = sorted(s.status for s in result.summaries)
    assert "no_action" in by_status and "success" in by_status  # slot 0 idles, slot 1 works
    with open_store(tmp_path, create=False) as store:
        bad = [s for s in store.episodes("own-error") if s.status == "no_action"]
        record = store.episode_record("own-error", bad[0].episode)
    assert "the model timed out" in json.dumps(record["steps"][0])


def test_a_run_stops_resumably_when_the_agent_is_down_for_every_slot(tmp_path):
    trace = load_task(PRESET).perfect_trace()
    state = {"down": False, "answered": 0}

    def outage(request, answer):
        if state["down"]:
            return 503, b"down"
        state["answered"] += 1
        if state["answered"] >= 7:  # a few decisions go through, then the agent goes down
            state["down"] = True
        return None

    pacing = Pacing(retry_backoff_s=0.05, max_backoff_s=0.1, max_outage_s=1.0)
    with LoopbackAgentServer(TraceAgent(trace), reply=outage) as server:
        spec = RunSpec(PRESET, agent=server.url, episodes=4, slots=2, out=tmp_path, name="down",
                       pacing=pacing)
        started = time.perf_counter()
        first = run(spec)
        assert time.perf_counter() - started < 60
        assert first.failures and "could not be reached" in first.failures[0]
        stored = len(first.summaries)
        assert stored < 4
        state["down"] = False
        state["answered"] = -1000
        second = run(spec)
    assert second.ok and second.resumed == stored
    assert sorted(s.episode for s in second.summaries) == [0, 1, 2, 3]
    assert all(s.status == "success" for s in second.summaries)
