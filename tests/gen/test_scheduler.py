"""The generation scheduler on the in-memory stand-in world (fast): breadth-first order, the
node cap, the per-stage cap, and an interrupted generation resumed in process."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.fakes import FakeMotion, FakeSim
from engine.scenario import PlaceCubeStage, make_task
from magma_core.agents import NoisyTraceAgent
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor

TRACE = [
    Decision(tool_calls=[ToolCall("pick", {"object": "cube"}, "panda")]),
    Decision(tool_calls=[ToolCall("place", {"area": "zone_a"}, "panda")]),
    Decision(tool_calls=[ToolCall("pick", {"object": "cube"}, "panda")]),
    Decision(tool_calls=[ToolCall("place", {"area": "zone_b"}, "panda")]),
]


def task():
    return make_task([PlaceCubeStage("zone_a"), PlaceCubeStage("zone_b", None)], name="TwoPlaces")


def executor(slots=3):
    sim = FakeSim(slots)
    return Executor(task(), slots, sim=sim, motion=FakeMotion(sim))


class Stop(Exception):
    pass


def grow(store, name, settings, noise=0.4, stop_after=None, slots=3):
    ex = executor(slots)
    seen = []

    def listener(event, tree, payload):
        seen.append(payload)
        if stop_after is not None and len(seen) >= stop_after:
            raise Stop

    generator = Generator(ex.task, NoisyTraceAgent(TRACE, noise=noise, seed=5), ex, store, name,
                          settings, listener=listener)
    return generator.run()


@pytest.fixture
def store(tmp_path):
    with GenerationStore(tmp_path / "magma.db") as s:
        yield s


def test_situations_are_asked_breadth_first_and_the_node_cap_holds(store):
    store.open_generation("bfs", "TwoPlaces", {})
    summary = grow(store, "bfs", GenSettings(branches=2, max_nodes=30, trees=2, max_per_stage=4))
    candidates = store.candidates("bfs")
    assert summary["candidates"] == len(candidates) == 30
    depth = {s.id: s.depth for s in store.situations("bfs")}
    order = [depth[c.situation] for c in candidates]
    # Candidates are stored in breadth-first order, up to the batches in flight.
    assert all(b >= a - 1 for a, b in zip(order, order[1:], strict=False))
    assert max(order) >= 2


def test_the_per_stage_cap_parks_extra_finishers(store):
    store.open_generation("k", "TwoPlaces", {})
    grow(store, "k", GenSettings(branches=3, max_nodes=80, trees=1, max_per_stage=1), noise=0.0)
    situations = {s.id: s for s in store.situations("k")}
    finishers = [c for c in store.candidates("k") if c.stage == 0 and c.end_status == "optimal"]
    assert len(finishers) >= 2
    continued = [c for c in finishers if situations[c.next_situation].status != "parked"]
    assert len(continued) == 1
    assert any(c.episode_status == "success" for c in store.candidates("k"))


def test_an_interrupted_generation_resumes_without_losses_or_duplicates(store):
    settings = GenSettings(branches=2, max_nodes=40, trees=2, max_per_stage=2)
    store.open_generation("r", "TwoPlaces", {})
    with pytest.raises(Stop):
        grow(store, "r", settings, stop_after=13)
    assert len(store.candidates("r")) == 13
    grow(store, "r", settings)
    candidates = store.candidates("r")
    assert len(candidates) == 40
    assert len({(c.situation, c.candidate_index) for c in candidates}) == 40
    assert sorted(c.id for c in candidates) == list(range(40))
    # The same generation grown in one go stores the same multiset of decisions per depth.
    store.open_generation("once", "TwoPlaces", {})
    grow(store, "once", settings)
    def shape(name):
        depth = {s.id: s.depth for s in store.situations(name)}
        return Counter((depth[c.situation], c.status) for c in store.candidates(name))
    assert shape("r") == shape("once")


class _Down(NoisyTraceAgent):
    """The noisy-trace agent behind an endpoint that cannot be reached."""

    unreachable_codes = frozenset({"transport_error"})

    def decide(self, request_id, agent_input, candidate_index):
        from magma_core.agents.base import Candidate

        return Candidate.fail("transport_error", "connection refused", dict(agent_input.memory),
                              component=self.component)


def test_an_unreachable_agent_stops_the_generation_resumably(store):
    from magma_core.runs import AgentOutage, Pacing

    store.open_generation("down", "TwoPlaces", {})
    ex = executor()
    settings = GenSettings(branches=2, max_nodes=20, trees=2)
    quick = Pacing(retry_backoff_s=0.01, max_backoff_s=0.02, max_outage_s=0.3)
    down = Generator(ex.task, _Down(TRACE, noise=0.0), ex, store, "down", settings, pacing=quick)
    with pytest.raises(AgentOutage, match="could not be reached.*connection refused"):
        down.run()
    assert len(store.trees("down")) == 2 and store.candidates("down") == []  # nothing lost
    Generator(ex.task, NoisyTraceAgent(TRACE, noise=0.4, seed=5), ex, store, "down", settings).run()
    assert len(store.candidates("down")) == 20


def test_requests_in_flight_follow_the_pacing(store):
    import threading
    import time

    from magma_core.runs import Pacing

    inner = NoisyTraceAgent(TRACE, noise=0.4, seed=5)
    state = {"now": 0, "most": 0, "requests": 0}
    lock = threading.Lock()

    class Counting(NoisyTraceAgent):
        concurrent = True

        def respond(self, request):
            with lock:
                state["now"] += 1
                state["requests"] += 1
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.01)
            try:
                return inner.respond(request)
            finally:
                with lock:
                    state["now"] -= 1

    ex = executor()
    for concurrency in (1, 3):
        state.update(now=0, most=0, requests=0)
        name = f"paced{concurrency}"
        store.open_generation(name, "TwoPlaces", {})
        Generator(ex.task, Counting(TRACE), ex, store, name, GenSettings(branches=2, max_nodes=24, trees=2),
                  pacing=Pacing(concurrency=concurrency)).run()
        assert len(store.candidates(name)) == 24
        assert state["most"] <= concurrency and state["requests"] >= 12 // 2
    assert state["most"] == 3  # several requests in flight when the pacing allows them
