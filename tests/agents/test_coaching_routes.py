"""The coaching routes of ``magma serve-agent`` on a real loopback server (uvicorn): sessions
(204, 409 on reconfiguration, 404 when unknown), requests answered by a trace agent's
reference, malformed bodies, ``/v1/info``; and the ``http://`` coach of ``magma gen`` against it."""

from __future__ import annotations

import httpx
import pytest

from magma_core.agents import TraceAgent
from magma_core.cli.serve_agent import create_app
from magma_core.gen.coaching.coaches import CoachContext, ask_coach
from magma_core.gen.coaching.http_coach import HttpCoach
from magma_core.protocol.coaching import CoachingRequest
from magma_core.simulation.data_structures.decisions import ToolCall
from magma_core.simulation.tasks.perfect_trace import PerfectTrace, ToolCallEvent

TRACE = PerfectTrace([ToolCallEvent([ToolCall("pick", {"object": "a"})]),
                      ToolCallEvent([ToolCall("place", {"area": "zone_a"})])])


def request_body(run_id="g", request_id="g:1"):
    def step(i, cursor, calls):
        return {"id": i, "input": {"id": i, "instruction": {"type": "env", "content": "x"},
                                   "attributes": {"known_robots": ["panda"]},
                                   "memory": {"trace_cursor": cursor}},
                "decision": {"say": "", "tool_calls": calls},
                "execution": {"calls": [{"tool": calls[0]["name"], "ok": False, "message": "no"}]}}
    pick = {"name": "pick", "arguments": {"object": "a"}, "target_robot_name": "panda"}
    pick_b = {"name": "pick", "arguments": {"object": "b"}, "target_robot_name": "panda"}
    return {"run_id": run_id, "request_id": request_id, "kind": "failure", "event": "exceeded",
            "stage": {"index": 0, "goal": "put a in zone_a"},
            "trajectory": [step(0, 0, [pick]), step(1, 1, [pick_b])],
            "reinjection_points": [{"id": "replace:0", "input_step_id": 0},
                                   {"id": "replace:1", "input_step_id": 1}],
            "feedback": "exceeded"}


@pytest.fixture
def url(serve):
    return serve(create_app(TraceAgent(TRACE)))


def test_sessions_and_requests_follow_the_protocol(url):
    with httpx.Client(base_url=url, timeout=10) as client:
        assert client.post("/v1/coaching", json=request_body()).status_code == 404  # no session
        assert client.put("/v1/coaching/sessions/g", json={}).status_code == 204
        assert client.put("/v1/coaching/sessions/g", json={}).status_code == 204  # same config
        assert client.put("/v1/coaching/sessions/g", json={"capture_logs": True}).status_code == 409
        assert client.put("/v1/coaching/sessions/h", json={"provider": "llm"}).status_code == 422
        reply = client.post("/v1/coaching", json=request_body())
        assert reply.status_code == 200
        body = reply.json()
        assert body["status"] == "corrected" and body["request_id"] == "g:1"
        assert body["diagnosis"]["step_id"] == 1  # the first decision off the reference
        repair = body["proposals"][0]
        assert repair["reinjection_point_id"] == "replace:1"
        assert repair["extra_keys"]["decision"]["tool_calls"][0]["name"] == "place"
        assert repair["extra_keys"]["reference_index"] == 1
        assert client.post("/v1/coaching", content=b"{not json").status_code == 422
        bad = request_body()
        bad["reinjection_points"][0] = {"id": "replace:0"}  # neither input nor step
        assert client.post("/v1/coaching", json=bad).status_code == 422
        assert client.delete("/v1/coaching/sessions/g").status_code == 204
        assert client.delete("/v1/coaching/sessions/g").status_code == 404
        assert client.post("/v1/coaching", json=request_body()).status_code == 404  # closed
        info = client.get("/v1/info").json()
        assert info["coaching_session_version"] == "1"
        assert set(info["specialized_coaching"]) == {"failure", "suboptimal", "format"}


def test_the_http_coach_opens_asks_and_closes(url):
    coach = HttpCoach(url, timeout=10)
    request = CoachingRequest.model_validate(request_body())
    reply = ask_coach(coach, request, CoachContext(0, []))
    assert reply.response.status == "corrected" and reply.raw
    coach.close()
    with httpx.Client(base_url=url, timeout=10) as client:  # the session was closed
        assert client.delete("/v1/coaching/sessions/g").status_code == 404


def test_the_http_coach_records_bad_answers_as_errors(serve):
    from fastapi import FastAPI, Response

    answers = ["{oops", '{"request_id": "other", "status": "abandoned", "reason": "x"}', "busy"]
    app = FastAPI()

    @app.put("/v1/coaching/sessions/{run_id}", status_code=204, response_model=None)
    def open_session(run_id: str) -> Response:
        return Response(status_code=204)

    @app.post("/v1/coaching")
    def coaching() -> Response:
        body = answers.pop(0)
        return Response(body, status_code=409 if body == "busy" else 200, media_type="application/json")

    url = serve(app)
    request = CoachingRequest.model_validate(request_body())
    coach = HttpCoach(url, timeout=5)
    first = ask_coach(coach, request, CoachContext(0, []))
    assert first.response.status == "error" and "not a coaching response" in first.response.reason
    assert first.raw == "{oops"
    second = ask_coach(coach, request, CoachContext(0, []))
    assert second.response.status == "error" and "other" in second.response.reason
    third = ask_coach(coach, request, CoachContext(0, []))
    assert third.response.status == "error" and "409" in third.response.reason and third.raw == "busy"
    coach.close()
    unreachable = ask_coach(HttpCoach("http://127.0.0.1:9", timeout=1), request, CoachContext(0, []))
    assert unreachable.response.status == "error" and "unreachable" in unreachable.response.reason
