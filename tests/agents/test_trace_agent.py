"""TraceAgent: replays a perfect trace through the memory cursor, statelessly."""

from __future__ import annotations

from magma_core.agents import TraceAgent
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.tasks.perfect_trace import (
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)

from .agent_helpers import make_request

TRACE = PerfectTrace([
    UserEvent("Bring me the cup."),
    ToolCallEvent([ToolCall("pick", {"object_name": "cup"}, None)]),
    MessageEvent("Here is your cup."),
])


def test_replays_decision_by_decision_through_memory():
    agent = TraceAgent(TRACE)
    first = agent.respond(make_request(memory={"keep": 1}, num_outputs=2))
    assert [o.status for o in first] == ["completed", "completed"]
    call = first[0].output.tool_calls[0]
    assert (call.name, call.arguments, call.target_robot_name) == ("pick", {"object_name": "cup"}, "r1")
    assert first[0].memory == {"keep": 1, "trace_cursor": 1} == first[1].memory
    second = agent.respond(make_request(memory=first[0].memory, kind="env", content="{}"))
    assert second[0].output.say == "Here is your cup." and second[0].output.tool_calls == []
    done = agent.respond(make_request(memory=second[0].memory))
    assert done[0].status == "error" and done[0].error.code == "trace_exhausted"
    assert done[0].memory == second[0].memory


def test_stateless_across_agents():
    """Two agent instances given the same memory give the same decision (works behind a server)."""
    memory = {"trace_cursor": 1}
    a = TraceAgent(TRACE).respond(make_request(memory=memory))
    b = TraceAgent(TRACE).respond(make_request(memory=memory))
    assert a[0].output == b[0].output and a[0].output.say == "Here is your cup."


def test_bad_memory_and_ambiguous_robot_become_errors():
    agent = TraceAgent(TRACE)
    bad = agent.respond(make_request(memory={"trace_cursor": "x"}))
    assert bad[0].error.code == "invalid_memory"
    ambiguous = agent.respond(make_request(robots=["r1", "r2"]))
    assert ambiguous[0].error.code == "missing_robot"
    explicit = TraceAgent(PerfectTrace([ToolCallEvent([ToolCall("pick", {}, "r2")])]))
    assert explicit.respond(make_request(robots=["r1", "r2"]))[0].output.tool_calls[0].target_robot_name == "r2"


def test_info():
    info = TraceAgent(TRACE).info()
    assert info.agent_id == "magma.trace" and info.protocol_version == "2.0"
