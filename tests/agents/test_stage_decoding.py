"""Stage-aware decoding against a real loopback HTTP server that records what it received:
the tools and ``tool_choice`` per stage kind, the fallback when ``required`` is refused, the
JSON-schema constrained replies, and the hard token cap on a streamed reply."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from magma_core.agents import OpenAIChatAgent
from magma_core.agents.chat_options import ChatOptions
from magma_core.protocol.agent import AgentInput, AgentRequest

from .agent_helpers import TOOLS, completion, tool_call


def _request(kind: str | None, callable_tools=None, robots=("r1",)) -> AgentRequest:
    extra = {} if kind is None else {"stage": {"index": 0, "kind": kind, "callable_tools": callable_tools}}
    return AgentRequest(request_id="r", inputs=[AgentInput(
        id=0, instruction={"type": "user", "content": "Go."}, tools=TOOLS,
        attributes={"known_robots": list(robots)}, extra_keys=extra)])


def _agent(fake, **options) -> OpenAIChatAgent:
    return OpenAIChatAgent(fake.base_url, "m", options=ChatOptions(retries=0, backoff=0.01, timeout=10, **options),
                           on_notice=lambda line: None)


def _tools_sent(body) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_each_stage_kind_gets_its_tools_and_tool_choice(fake_openai):
    fake_openai.script = [completion(tool_calls=[tool_call("pick", {"object_name": "cup"})])]
    agent = _agent(fake_openai)
    out = agent.respond(_request("action"))[0]
    assert out.status == "completed" and out.output.tool_calls[0].name == "pick"
    action = fake_openai.requests[-1]
    assert action["tool_choice"] == "required" and _tools_sent(action) == ["pick", "wait"]
    agent.respond(_request("action", ["wait"]))
    assert fake_openai.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "wait"}}
    fake_openai.script = [completion("The cup is red.")]
    out = agent.respond(_request("text_only", []))[0]
    answer = fake_openai.requests[-1]
    assert "tools" not in answer and "tool_choice" not in answer  # an answer, nothing to call
    assert out.output.say == "The cup is red."
    agent.respond(_request("text_only", ["pick"]))
    subset = fake_openai.requests[-1]
    assert _tools_sent(subset) == ["pick"] and subset["tool_choice"] == "auto"
    # without a stage (an older engine), or with the option off: every tool, auto
    agent.respond(_request(None))
    assert fake_openai.requests[-1]["tool_choice"] == "auto"
    _agent(fake_openai, stage_aware=False).respond(_request("text_only", []))
    off = fake_openai.requests[-1]
    assert _tools_sent(off) == ["pick", "wait"] and off["tool_choice"] == "auto"
    # an explicit tool_choice wins over the stage's
    _agent(fake_openai, tool_choice="none").respond(_request("action"))
    assert fake_openai.requests[-1]["tool_choice"] == "none"


def test_a_server_refusing_required_is_asked_with_auto_from_then_on(fake_openai):
    def answer(body):
        if body.get("tool_choice") == "required":
            return 500, {"error": "AssertionError"}  # llama-cpp-python's chatml-function-calling
        return completion(tool_calls=[tool_call("wait", {})])

    fake_openai.script = [answer]
    notices = []
    agent = OpenAIChatAgent(fake_openai.base_url, "m", options=ChatOptions(retries=0), on_notice=notices.append)
    assert agent.respond(_request("action"))[0].status == "completed"
    assert [r.get("tool_choice") for r in fake_openai.requests] == ["required", "auto"]
    assert agent.respond(_request("action"))[0].status == "completed"
    assert [r.get("tool_choice") for r in fake_openai.requests] == ["required", "auto", "auto"]
    assert any("refused tool_choice 'required'" in n for n in notices)


def test_constrained_replies_follow_a_schema_of_the_stage_calls(fake_openai):
    fake_openai.script = [completion(json.dumps({"tool_calls": [{"name": "pick", "arguments": {"object_name": "cup", "robot": "r2"}}]}))]
    agent = _agent(fake_openai, constrain="json_object")
    out = agent.respond(_request("action", robots=("r1", "r2")))[0]
    assert out.status == "completed"
    [call] = out.output.tool_calls
    assert (call.name, call.arguments, call.target_robot_name) == ("pick", {"object_name": "cup"}, "r2")
    sent = fake_openai.requests[-1]
    assert "tools" not in sent and "tool_choice" not in sent
    schema = sent["response_format"]["schema"]
    assert sent["response_format"]["type"] == "json_object"
    calls = schema["properties"]["tool_calls"]
    assert calls["minItems"] == 1 and calls["maxItems"] == 2  # one call per robot at most
    pick = calls["items"]["anyOf"][0]
    assert pick["properties"]["name"] == {"const": "pick"}
    assert pick["properties"]["arguments"]["properties"]["robot"]["enum"] == ["r1", "r2"]
    assert pick["properties"]["arguments"]["properties"]["object_name"]["maxLength"] == 200
    assert "pick(" in sent["messages"][0]["content"]  # the tools, described to the model
    # the history keeps the OpenAI tool-call form
    assert out.memory["history"][-1]["tool_calls"][0]["function"]["name"] == "pick"
    # json_schema (OpenAI, vLLM, llama-server); a text-only stage with tools may answer
    fake_openai.script = [completion('{"answer": "Two cups."}'), completion("not json")]
    agent = _agent(fake_openai, constrain="json_schema")
    out = agent.respond(_request("text_only", ["pick"]))[0]
    assert out.output.say == "Two cups." and not out.output.tool_calls
    fmt = fake_openai.requests[-1]["response_format"]
    assert fmt["type"] == "json_schema" and "answer" in json.dumps(fmt["json_schema"]["schema"])
    bad = agent.respond(_request("action"))[0]
    assert bad.status == "error" and bad.error.code == "invalid_reply"
    assert "not the JSON object its schema asks for" in bad.error.message


class _Streamer(BaseHTTPRequestHandler):
    """Streams one content token every 5 ms for ever (a runaway that ignores max_tokens)."""

    bodies: list = []
    sent: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        type(self).bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        count = 0
        try:
            while count < 100_000:
                chunk = {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                count += 1
                time.sleep(0.005)
        except OSError:  # the client stopped reading and closed the connection
            pass
        type(self).sent.append(count)


def test_the_hard_token_cap_stops_a_streamed_runaway():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streamer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        agent = OpenAIChatAgent(url, "m", options=ChatOptions(max_tokens=20, stream=True, retries=0, timeout=30),
                                on_notice=lambda line: None)
        started = time.monotonic()
        out = agent.respond(_request("text_only", []))[0]
        assert time.monotonic() - started < 10
        assert out.status == "completed" and out.output.say == "x" * 21
        step = out.internal_steps[0]
        assert step["finish_reason"] == "length" and step["streamed_tokens"] == 21
        assert _Streamer.bodies[0]["stream"] is True and _Streamer.bodies[0]["max_tokens"] == 20
        deadline = time.monotonic() + 5
        while not _Streamer.sent and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _Streamer.sent and _Streamer.sent[0] < 2000  # the server saw the connection close
    finally:
        server.shutdown()
        server.server_close()
