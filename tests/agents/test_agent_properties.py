"""Property-based: malformed agent responses never escape as unhandled exceptions.

Each generated response is a valid answer to a generated request with one or more faults
injected (wrong ids, missing or extra candidates, unknown fields, wrong types, huge strings,
NaN, order). ``validate_request`` must raise a ``ValueError`` with a message; ``HttpAgent``
must return a response that answers the request exactly, with the faulty candidates as errors.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from magma_core.agents import HttpAgent
from magma_core.protocol.agent import AgentInput, AgentRequest, AgentResponse

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HUGE = 300_000

json_scalars = st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)


@st.composite
def requests(draw) -> AgentRequest:
    ids = draw(st.lists(st.integers(-3, 50), min_size=1, max_size=3, unique=True))
    return AgentRequest(
        request_id=draw(st.text(min_size=1, max_size=6)),
        inputs=[AgentInput(id=i, instruction={"type": "user", "content": "go"},
                           num_outputs=draw(st.integers(1, 3)), memory={"n": i}) for i in ids],
    )


def valid_response(request: AgentRequest) -> list[dict[str, Any]]:
    return [
        {"request_id": request.request_id, "source_id": i.id, "candidate_index": k, "status": "completed",
         "memory": {"n": i.id}, "internal_steps": [], "output": {"say": "ok", "tool_calls": [
             {"name": "pick", "arguments": {"x": 1}, "target_robot_name": "r1"}]}}
        for i in request.inputs for k in range(i.num_outputs)
    ]


# Values that are always wrong for a field (strict models: no coercion).
WRONG = {
    "request_id": st.integers() | st.none() | st.just("") | st.lists(st.text(), max_size=2),
    "source_id": st.text(max_size=3) | st.floats() | st.booleans() | st.none() | st.lists(st.integers(), max_size=2),
    "candidate_index": st.integers(max_value=-1) | st.text(max_size=3) | st.floats() | st.booleans() | st.none(),
    "status": st.text(max_size=8).filter(lambda s: s not in ("completed", "error")) | st.integers() | st.none(),
    "memory": st.lists(json_values, max_size=2) | st.text(max_size=3) | st.integers() | st.none(),
    "internal_steps": st.dictionaries(st.text(max_size=2), json_values, max_size=2) | st.text(max_size=3) | st.lists(st.integers(), min_size=1, max_size=2),
    "output": st.text(max_size=3) | st.integers() | st.lists(st.integers(), max_size=2),
}


@st.composite
def faults(draw, n: int):
    """``(name, apply)``: a fault that makes a valid response of ``n`` outputs invalid."""
    i = draw(st.integers(0, n - 1))
    kind = draw(st.sampled_from([
        "drop", "duplicate", "swap", "request_id", "source_id", "index", "unknown_field",
        "nested_unknown_field", "wrong_type", "delete_field", "status_flip", "huge_request_id",
        "huge_field_name", "nan", "bad_tool_call", "not_a_list",
    ]))
    if kind == "swap" and n < 2:
        kind = "drop"
    field = draw(st.sampled_from(sorted(WRONG)))
    wrong = draw(WRONG[field])
    junk = draw(json_values)
    other = draw(st.integers(-100, 100))

    def apply(data: list[dict[str, Any]]) -> Any:
        item = data[i]
        if kind == "drop":
            del data[i]
        elif kind == "duplicate":
            data.insert(i, copy.deepcopy(item))
        elif kind == "swap":
            j = (i + 1) % n
            data[i], data[j] = data[j], data[i]
        elif kind == "request_id":
            item["request_id"] += "-other"
        elif kind == "source_id":
            item["source_id"] = item["source_id"] + 1000 + abs(other)
        elif kind == "index":
            item["candidate_index"] += 1 + abs(other) % 5
        elif kind == "unknown_field":
            item["surprise"] = junk
        elif kind == "nested_unknown_field":
            item["output"]["surprise"] = junk
        elif kind == "wrong_type":
            item[field] = wrong
        elif kind == "delete_field":
            del item[draw_field(field)]
        elif kind == "status_flip":
            item["status"] = "error"
        elif kind == "huge_request_id":
            item["request_id"] = "x" * HUGE
        elif kind == "huge_field_name":
            item["output"]["y" * HUGE] = 1
        elif kind == "nan":
            item["memory"]["bad"] = float("nan")
        elif kind == "bad_tool_call":
            item["output"]["tool_calls"][0]["target_robot_name"] = ""
        elif kind == "not_a_list":
            return junk if not isinstance(junk, list) or not junk else {"outputs": data}
        return data

    return kind, apply


def draw_field(field: str) -> str:
    """A required field to delete (optional ones would not make the output invalid)."""
    return field if field in ("request_id", "source_id", "candidate_index", "status", "memory") else "memory"


@st.composite
def broken_exchanges(draw):
    """``(request, response data with one fault, fault name)``; two faults could cancel out."""
    request = draw(requests())
    data = valid_response(request)
    name, apply = draw(faults(len(data)))
    return request, apply(data), name


@SETTINGS
@given(broken_exchanges())
def test_validate_request_rejects_every_fault(exchange):
    request, data, name = exchange
    try:
        AgentResponse.model_validate(data).validate_request(request)
    except ValueError as exc:  # pydantic's ValidationError included
        assert str(exc).strip()
    else:
        raise AssertionError(f"fault {name!r} was accepted")


def _agent_serving(body: bytes) -> HttpAgent:
    info = {"agent_id": "x", "agent_version": "1", "protocol_version": "2.0"}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "ready"})
        if request.url.path == "/v1/info":
            return httpx.Response(200, json=info)
        return httpx.Response(200, content=body)

    return HttpAgent("http://agent.test", retries=0, transport=httpx.MockTransport(handler))


def _check_answers(agent: HttpAgent, request: AgentRequest) -> AgentResponse:
    response = agent.respond(request)
    response.validate_request(request)  # always answers the request exactly
    for output in response:
        if output.status == "error":
            assert output.error.message.strip() and output.error.component == "http_agent"
            assert output.memory == next(i.memory for i in request.inputs if i.id == output.source_id)
    return response


@SETTINGS
@given(broken_exchanges())
def test_http_agent_turns_faults_into_error_candidates(exchange):
    request, data, name = exchange
    response = _check_answers(_agent_serving(json.dumps(data).encode()), request)
    assert any(o.status == "error" for o in response), name


@SETTINGS
@given(requests(), st.binary(max_size=200) | st.text(max_size=200).map(str.encode) | json_values.map(lambda v: json.dumps(v).encode()))
def test_http_agent_survives_arbitrary_bodies(request, body):
    response = _check_answers(_agent_serving(body), request)
    assert all(o.status == "error" for o in response)


@settings(max_examples=10, deadline=None)
@given(requests())
def test_http_agent_accepts_valid_responses(request):
    response = _check_answers(_agent_serving(json.dumps(valid_response(request)).encode()), request)
    assert all(o.status == "completed" for o in response)
