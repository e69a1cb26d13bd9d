"""The noisy-trace agent: reproducible candidates, the reference with probability 1 - P, and
plausible mistakes otherwise."""

from __future__ import annotations

import pytest

from magma_core.agents import NoisyTraceAgent, from_spec, parse_spec
from magma_core.agents.spec import AgentSpecError
from magma_core.protocol.agent import AgentInput, AgentRequest
from magma_core.simulation.data_structures import Decision, ToolCall

TRACE = [
    Decision(tool_calls=[ToolCall("pick", {"object": "red_cube"}, "panda")]),
    Decision(tool_calls=[ToolCall("place", {"area": "zone_a"}, "panda")]),
    Decision(say="Done."),
]
ATTRIBUTES = {"objects": ["red_cube", "green_cube"], "areas": ["zone_a", "zone_b"], "known_robots": ["panda"]}


def ask(agent, memory, n=8, sid=0):
    request = AgentRequest(request_id="r", inputs=[AgentInput(
        id=sid, instruction={"type": "user", "content": "Sort"}, attributes=ATTRIBUTES,
        memory=memory, num_outputs=n)])
    return list(agent.respond(request).validate_request(request))


def test_without_noise_it_replays_the_trace():
    agent = NoisyTraceAgent(TRACE, noise=0.0)
    outputs = ask(agent, {}, n=3)
    assert all(o.output.tool_calls[0].name == "pick" for o in outputs)
    assert all(o.memory["trace_cursor"] == 1 for o in outputs)


def test_candidates_are_reproducible_and_differ_between_indices():
    agent = NoisyTraceAgent(TRACE, noise=0.9, seed=3)
    first = [o.model_dump() for o in ask(agent, {"trace_cursor": 1}, n=16)]
    again = [o.model_dump() for o in ask(agent, {"trace_cursor": 1}, n=16)]
    assert first == again
    kinds = {o["internal_steps"][0]["noise"] for o in first}
    assert len(kinds) >= 3  # several mistakes show up among 16 noisy candidates
    assert NoisyTraceAgent(TRACE, noise=0.9, seed=4).respond(AgentRequest(
        request_id="r", inputs=[AgentInput(id=0, instruction={"type": "user", "content": "Sort"},
                                           attributes=ATTRIBUTES, memory={"trace_cursor": 1},
                                           num_outputs=16)])).model_dump() != first


def test_mistakes_are_plausible():
    agent = NoisyTraceAgent(TRACE, noise=1.0)
    seen = {}
    for sid in range(40):
        for o in ask(agent, {"trace_cursor": 1}, n=2, sid=sid):
            seen[o.internal_steps[0]["noise"]] = (o.output, o.memory["trace_cursor"])
    assert set(seen) == {"wrong_argument", "skip", "repeat", "message"}
    wrong, cursor = seen["wrong_argument"]
    assert wrong.tool_calls[0].name == "place" and wrong.tool_calls[0].arguments == {"area": "zone_b"}
    assert cursor == 2
    assert seen["skip"][0].say == "Done." and seen["skip"][1] == 3
    assert seen["repeat"][0].tool_calls[0].name == "pick" and seen["repeat"][1] == 1
    assert seen["message"][0].tool_calls == [] and seen["message"][1] == 1


def test_spec_strings():
    assert parse_spec("noisy-trace").noise == pytest.approx(0.3)
    assert parse_spec("noisy-trace:0.25").noise == pytest.approx(0.25)
    for bad in ("noisy-trace:2", "noisy-trace:x", "noisy-trace:-0.1"):
        with pytest.raises(AgentSpecError):
            parse_spec(bad)
    agent = from_spec("noisy-trace:0.5", trace=TRACE, seed=7)
    assert isinstance(agent, NoisyTraceAgent) and agent.noise == 0.5 and agent.seed == 7
    with pytest.raises(AgentSpecError):
        from_spec("noisy-trace")
