"""Several agent requests in flight: concurrency bound, batch window, arrival order, failures."""

from __future__ import annotations

import threading
import time

from magma_core.agents.base import Agent, NoAnswer, outputs_by_input
from magma_core.agents.inflight import InFlightRequests
from magma_core.protocol.agent import AgentInput, AgentOutput, AgentRequest, AgentResponse


def _input(i: int) -> AgentInput:
    return AgentInput(id=i, instruction={"type": "user", "content": f"do {i}"}, tools=[],
                      attributes={}, memory={})


class SleepyAgent(Agent):
    """Answers each input after ``delay(id)`` seconds; records requests and concurrency."""

    concurrent = True

    def __init__(self, delay=lambda i: 0.0, unreachable=()) -> None:
        self.delay = delay
        self.unreachable = set(unreachable)
        self.requests: list[list[int]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()

    def respond(self, request: AgentRequest) -> AgentResponse:
        with self.lock:
            self.requests.append([i.id for i in request.inputs])
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(max(self.delay(i.id) for i in request.inputs))
        with self.lock:
            self.in_flight -= 1
        return AgentResponse([
            AgentOutput(request_id=request.request_id, source_id=i.id, candidate_index=0,
                        status="completed", memory={"seen": i.id}, output={"say": f"done {i.id}"})
            for i in request.inputs
        ])

    def answer(self, request):
        answers = outputs_by_input(self.respond(request))
        for i in request.inputs:
            if i.id in self.unreachable:
                answers[i.id] = NoAnswer("http_error", "HTTP 503")
        return answers


def _receive_all(requests: InFlightRequests, count: int) -> list:
    got = []
    deadline = time.monotonic() + 10
    while len(got) < count and time.monotonic() < deadline:
        got += requests.receive(timeout=1.0)
    return got


def test_answers_arrive_in_their_own_time_not_in_sending_order():
    agent = SleepyAgent(delay=lambda i: 0.3 if i == 0 else 0.01)
    with InFlightRequests(agent, concurrency=4) as requests:
        for i in range(4):
            requests.send(f"slot{i}", _input(i))
        first = requests.receive(timeout=5)
        assert "slot0" not in [a.key for a in first]  # the slow one does not hold the others
        rest = _receive_all(requests, 4 - len(first))
    arrivals = first + rest
    assert sorted(a.key for a in arrivals) == ["slot0", "slot1", "slot2", "slot3"]
    assert arrivals[-1].key == "slot0"
    assert all(a.answer[0].memory == {"seen": int(a.key[-1])} for a in arrivals)
    assert sorted(agent.requests) == [[0], [1], [2], [3]]  # one input per request


def test_concurrency_bounds_the_requests_in_flight():
    agent = SleepyAgent(delay=lambda i: 0.05)
    with InFlightRequests(agent, concurrency=3) as requests:
        for i in range(12):
            requests.send(i, _input(i))
        arrivals = _receive_all(requests, 12)
    assert len(arrivals) == 12 and agent.most_in_flight == 3


def test_an_agent_that_is_not_concurrent_gets_one_request_at_a_time():
    agent = SleepyAgent(delay=lambda i: 0.02)
    agent.concurrent = False
    with InFlightRequests(agent, concurrency=8) as requests:
        for i in range(5):
            requests.send(i, _input(i))
        assert len(_receive_all(requests, 5)) == 5
    assert agent.most_in_flight == 1


def test_a_batch_window_gathers_inputs_sent_close_together():
    agent = SleepyAgent()
    with InFlightRequests(agent, concurrency=2, batch_window=0.3) as requests:
        for i in range(4):
            requests.send(i, _input(i))
        assert len(_receive_all(requests, 4)) == 4
    assert agent.requests == [[0, 1, 2, 3]]


def test_send_together_is_one_request_and_unreachable_inputs_say_so():
    agent = SleepyAgent(unreachable={1})
    with InFlightRequests(agent) as requests:
        requests.send_together([(i, _input(i)) for i in range(3)])
        arrivals = {a.key: a for a in _receive_all(requests, 3)}
    assert agent.requests == [[0, 1, 2]]
    assert isinstance(arrivals[1].answer, NoAnswer) and arrivals[1].answer.code == "http_error"
    assert arrivals[0].answer[0].status == "completed"


def test_an_agent_that_raises_gives_error_outputs():
    class Broken(Agent):
        def respond(self, request):
            raise RuntimeError("boom")

    with InFlightRequests(Broken()) as requests:
        requests.send("a", _input(0))
        [arrival] = _receive_all(requests, 1)
    assert arrival.answer[0].status == "error" and arrival.answer[0].error.code == "agent_exception"
