"""``magma serve-agent``'s routes fuzzed on a real loopback server (uvicorn): bodies near a
valid request with fields swapped for hostile values (NaN, Infinity, 1e999, 10**30 ids, 100 KB
names, wrong types, junk bytes), hostile session ids and methods. No answer is a 5xx, every
refusal is short JSON with a reason, and no refusal echoes a long input back.

The regular suite sends 500 requests (100 examples of five); ``-m slow`` 15,000.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magma_core.agents import TraceAgent
from magma_core.cli.serve_agent import create_app
from magma_core.simulation.data_structures.decisions import ToolCall
from magma_core.simulation.tasks.perfect_trace import PerfectTrace, ToolCallEvent

from .test_coaching_routes import request_body as coaching_body

TRACE = PerfectTrace([ToolCallEvent([ToolCall("pick", {"object": "a"})])])
LONG = "n" * 100_000
HOSTILE = st.one_of(
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 10**30, -(10**30), 2**63, LONG,
                     None, True, [], {}, "", [LONG], {LONG: 1}, {"trace_cursor": 10**30},
                     {"trace_cursor": -1}, {"trace_cursor": "x"}, 0, -1, 1025]),
    st.text(max_size=30), st.integers(), st.floats(),
)


def response_body() -> dict:
    return {"request_id": "r", "inputs": [
        {"id": 1, "instruction": {"type": "user", "content": "pick a"},
         "attributes": {"known_robots": ["panda"]}, "memory": {}, "num_outputs": 1}]}


def _paths(body: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(body, dict):
        for key, value in body.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            out += _paths(value, (*prefix, index))
    return out


def _replace(body: object, path: tuple, value: object) -> object:
    if not path:
        return value
    body[path[0]] = _replace(body[path[0]], path[1:], value)
    return body


@st.composite
def mutated(draw, make) -> bytes:
    """A valid body with one to three places replaced by hostile values, as raw JSON (NaN and
    Infinity written as Python's json module writes them), or junk bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=64))
    body = make()
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(body)))
        body = _replace(body, path, draw(HOSTILE))
    return json.dumps(body).encode()


def check(reply: httpx.Response) -> None:
    assert reply.status_code < 500, (reply.status_code, reply.text[:500])
    if reply.status_code >= 400:
        assert len(reply.content) < 10_000, reply.content[:300]  # no long input echoed
        assert "Traceback" not in reply.text
        assert "detail" in reply.json()


@pytest.fixture(scope="module")
def client():
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(TraceAgent(TRACE)), log_level="critical",
                                           access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=10) as c:
        assert c.put("/v1/coaching/sessions/g", json={}).status_code == 204
        yield c
    server.should_exit = True
    thread.join(timeout=5)
    sock.close()


def test_named_hostile_inputs_are_4xx_with_a_short_reason(client):
    raw = b'{"request_id": "r", "inputs": [{"id": 1, "instruction": {"type": "user", ' \
          b'"content": NaN}, "num_outputs": 1}]}'
    reply = client.post("/v1/responses", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 422 and "not a JSON number" in reply.text
    big = response_body()
    big["inputs"][0]["id"] = 10**30
    big["request_id"] = LONG
    reply = client.post("/v1/responses", json=big)
    assert reply.status_code == 422 and len(reply.content) < 2000 and "nnnn" * 100 not in reply.text
    reply = client.post("/v1/responses", content=b'{"request_id": 1e999}',
                        headers={"content-type": "application/json"})
    assert reply.status_code == 422 and "beyond a double's range" in reply.text
    assert client.post("/v1/responses", json=response_body()).status_code == 200


def _fuzz(client, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(responses=mutated(response_body), coaching=mutated(coaching_body),
           session=st.text(min_size=1, max_size=40), config=mutated(lambda: {"capture_logs": False}))
    def run(responses, coaching, session, config):
        headers = {"content-type": "application/json"}
        check(client.post("/v1/responses", content=responses, headers=headers))
        check(client.post("/v1/coaching", content=coaching, headers=headers))
        quoted = "/v1/coaching/sessions/" + quote(session, safe="")
        check(client.put(quoted, content=config, headers=headers))
        check(client.delete(quoted))
        check(client.get("/v1/info"))

    run()


@pytest.mark.parametrize("examples", [100, pytest.param(3000, marks=pytest.mark.slow)])
def test_fuzzed_requests_never_get_a_5xx(client, examples):
    _fuzz(client, examples)  # five requests an example
