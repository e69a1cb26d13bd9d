"""HttpAgent against our own agent server (in-process uvicorn) and against scripted servers."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from magma_core.agents import (
    AgentCheckError,
    HttpAgent,
    OpenAIChatAgent,
    ProtocolVersionError,
    TraceAgent,
    usage_of,
)
from magma_core.cli.serve_agent import create_app
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.tasks.perfect_trace import (
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)

from .agent_helpers import completion, make_request, tool_call

TRACE = PerfectTrace([
    UserEvent("Bring me the cup."),
    ToolCallEvent([ToolCall("pick", {"object_name": "cup"}, "r1")]),
    MessageEvent("Here is your cup."),
])
INFO = {"agent_id": "scripted", "agent_version": "1", "capabilities": {}, "protocol_version": "2.0"}


def _agent(url: str, **kw) -> HttpAgent:
    return HttpAgent(url, **{"timeout": 5.0, "retries": 1, "backoff": 0.01, **kw})


def _ready(scripted, responses=None):
    scripted.routes["GET /health"] = [{"status": "ready"}]
    scripted.routes["GET /v1/info"] = [INFO]
    if responses is not None:
        scripted.routes["POST /v1/responses"] = responses
    return scripted


def _echo(request: dict) -> list[dict]:
    """A well-behaved agent: one completed 'ok' per candidate."""
    return [
        {"request_id": request["request_id"], "source_id": i["id"], "candidate_index": k,
         "status": "completed", "memory": i.get("memory", {}), "output": {"say": "ok"}}
        for i in request["inputs"] for k in range(i.get("num_outputs", 1))
    ]


def test_round_trip_through_our_server(serve):
    """HttpAgent -> create_app(TraceAgent) over real HTTP on loopback -> TraceAgent."""
    url = serve(create_app(TraceAgent(TRACE)))
    with HttpAgent(url, timeout=10) as agent:
        info = agent.check()
        assert (info.agent_id, info.protocol_version) == ("magma.trace", "2.0")
        first = agent.respond(make_request(ids=(7, 3), num_outputs=2))
        assert [(o.source_id, o.candidate_index) for o in first] == [(7, 0), (7, 1), (3, 0), (3, 1)]
        assert first[0].output.tool_calls[0].name == "pick" and first[0].memory["trace_cursor"] == 1
        assert first[0].internal_steps[-1]["component"] == "http_agent"
        second = agent.respond(make_request(memory=first[0].memory, kind="env", content="{}"))
        assert second[0].output.to_decision().say == "Here is your cup."


def test_openai_agent_served_over_protocol(serve, fake_openai):
    """Any built-in agent can be served: HttpAgent -> our server -> OpenAIChatAgent -> fake model."""
    fake_openai.script = [completion(None, [tool_call("pick", {"object_name": "cup"})]), (500, "down")]
    model_agent = OpenAIChatAgent(fake_openai.base_url, "m", retries=0, timeout=5.0)
    with HttpAgent(serve(create_app(model_agent)), timeout=10) as agent:
        assert agent.check().agent_id == "magma.openai_chat"
        out = agent.respond(make_request())[0]
        assert out.output.tool_calls[0].arguments == {"object_name": "cup"}
        assert usage_of(out)["total_tokens"] == 18
        failed = agent.respond(make_request(memory=out.memory))[0]
        assert failed.error.code == "http_error" and failed.memory == out.memory


def test_our_server_rejects_invalid_protocol(serve):
    url = serve(create_app(TraceAgent(TRACE), max_candidates=4))
    assert httpx.get(f"{url}/health").json() == {"status": "ready"}
    assert httpx.post(f"{url}/v1/responses", json={"request_id": "r"}).status_code == 422
    bad_id = make_request().model_dump(mode="json")
    bad_id["inputs"][0]["id"] = "0"
    assert httpx.post(f"{url}/v1/responses", json=bad_id).status_code == 422
    extra = {**make_request().model_dump(mode="json"), "surprise": True}
    assert httpx.post(f"{url}/v1/responses", json=extra).status_code == 422
    too_many = make_request(num_outputs=5).model_dump(mode="json")
    assert httpx.post(f"{url}/v1/responses", json=too_many).status_code == 422


def test_refuses_another_protocol_version(scripted):
    _ready(scripted, [_echo])
    scripted.routes["GET /v1/info"] = [{**INFO, "protocol_version": "1.0"}]
    agent = _agent(scripted.url)
    with pytest.raises(ProtocolVersionError, match="speaks protocol '1.0'; MAGMA needs protocol '2.0'"):
        agent.check()
    outputs = agent.respond(make_request(num_outputs=2))
    assert [o.error.code for o in outputs] == ["agent_unavailable"] * 2
    assert "POST /v1/responses" not in scripted.calls


def test_health_polling_and_unreachable(scripted):
    _ready(scripted, [_echo])
    scripted.routes["GET /health"] = [(503, {"status": "loading"}), (503, {"status": "loading"}), {"status": "ready"}]
    with pytest.raises(AgentCheckError, match="HTTP 503"):
        _agent(scripted.url).check()
    assert _agent(scripted.url).check(wait_s=5).agent_id == "scripted"
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = _agent(f"http://127.0.0.1:{port}")
    with pytest.raises(AgentCheckError, match="unreachable"):
        dead.check()
    assert dead.respond(make_request())[0].error.code == "agent_unavailable"


def test_http_500_retried_then_error_candidates(scripted):
    _ready(scripted, [(500, "boom"), _echo])
    agent = _agent(scripted.url)
    assert agent.respond(make_request())[0].output.say == "ok"
    scripted.routes["POST /v1/responses"] = [(500, "boom")]
    outputs = agent.respond(make_request(num_outputs=2, memory={"m": 1}))
    assert [o.error.code for o in outputs] == ["http_error"] * 2
    assert outputs[0].memory == {"m": 1} and "HTTP 500" in outputs[0].error.message


def test_hang_past_the_timeout(scripted):
    _ready(scripted, [("hang", 1.5)])
    start = time.monotonic()
    outputs = _agent(scripted.url, timeout=0.3, retries=1).respond(make_request())
    assert time.monotonic() - start < 1.4
    assert outputs[0].error.code == "timeout" and "2 attempts" in outputs[0].error.message


def test_salvages_valid_candidates(scripted):
    def one_bad(request):
        outputs = _echo(request)
        outputs[1]["output"] = {"say": 42}
        return outputs

    _ready(scripted, [one_bad])
    outputs = _agent(scripted.url).respond(make_request(num_outputs=3))
    assert [o.status for o in outputs] == ["completed", "error", "completed"]
    assert "output 1 is invalid" in outputs[1].error.message and "42" in outputs[1].internal_steps[0]["output_raw"]


def test_wrong_count_fails_every_candidate(scripted):
    _ready(scripted, [lambda request: _echo(request)[:1]])
    outputs = _agent(scripted.url).respond(make_request(num_outputs=2))
    assert [o.error.code for o in outputs] == ["invalid_response"] * 2
    assert "got 1 outputs, expected a list of 2" in outputs[0].error.message


def test_oversized_reply_is_refused(scripted):
    _ready(scripted, [(200, "x" * 5000)])
    outputs = _agent(scripted.url, max_response_bytes=1000).respond(make_request())
    assert outputs[0].error.code == "response_too_large"
