"""The ``openai:MODEL`` coach against a scripted OpenAI-compatible endpoint on loopback:
malformed, invalid and valid JSON answers; every bad answer is recorded, none raises."""

from __future__ import annotations

from types import SimpleNamespace

from agents.agent_helpers import FakeOpenAI, completion
from magma_core.gen.coaching.coaches import CoachContext, ask_coach, build_coach
from magma_core.protocol.coaching import CoachingRequest

STAGES = [SimpleNamespace(is_text_only=lambda: False, target_tool_calls=2)]


def request():
    pick = {"name": "pick", "arguments": {"object": "b"}, "target_robot_name": "panda"}
    step = {"input": {"id": 0, "instruction": {"type": "user", "content": "put a in zone_a"},
                      "attributes": {"known_robots": ["panda"]}, "tools": [{"name": "pick"}]},
            "decision": {"say": "", "tool_calls": [pick]}}
    return CoachingRequest.model_validate({
        "run_id": "g", "request_id": "g:0", "kind": "failure", "event": "failure",
        "stage": {"index": 0, "goal": "a in zone_a"},
        "trajectory": [dict(step, id=0), dict(step, id=1)],
        "reinjection_points": [{"id": "replace:0", "input_step_id": 0}, {"id": "replace:1", "input_step_id": 1}],
        "feedback": "stage failed"})


def test_malformed_and_invalid_answers_are_recorded_never_raised():
    fake = FakeOpenAI()
    try:
        coach = build_coach(f"openai:m@{fake.base_url}", {"max_attempts": 2})
        fake.script = [completion('{"decision_index": 0, "repair": {"say": }}'), completion("no json at all")]
        reply = ask_coach(coach, request(), CoachContext(0, STAGES))
        assert reply.response.status == "error" and "no JSON object" in reply.response.reason
        assert reply.raw == "no json at all"
        assert "malformed JSON" in fake.requests[1]["messages"][-1]["content"]  # told what was wrong
        fake.script = [completion('{"decision_index": 7, "repair": {"tool_calls": []}}')]
        reply = ask_coach(coach, request(), CoachContext(0, STAGES))
        assert reply.response.status == "error" and "decision_index" in reply.response.reason
        fake.script = [completion('{"decision_index": 0, "repair": {"tool_calls": [{"name": "pick", "arguments": "x"}]}}')]
        reply = ask_coach(coach, request(), CoachContext(0, STAGES))
        assert reply.response.status == "error" and "invalid repair" in reply.response.reason
        fake.script = [(500, "down")]
        reply = ask_coach(coach, request(), CoachContext(0, STAGES))
        assert reply.response.status == "error"
        coach.close()
    finally:
        fake.close()


def test_a_valid_answer_is_a_repair_at_the_named_decision():
    fake = FakeOpenAI()
    try:
        coach = build_coach(f"openai:m@{fake.base_url}")
        fake.script = [completion('<think>hm</think>```json\n{"decision_index": 0, "reason": "wrong object", '
                                  '"repair": {"tool_calls": [{"name": "pick", "arguments": {"object": "a"}}]}}\n```')]
        reply = ask_coach(coach, request(), CoachContext(0, STAGES))
        assert reply.response.status == "corrected"
        proposal = reply.response.proposals[0]
        assert proposal.reinjection_point_id == "replace:0"
        call = proposal.extra_keys["decision"]["tool_calls"][0]
        assert call == {"name": "pick", "arguments": {"object": "a"}, "target_robot_name": "panda"}
        assert reply.response.diagnosis.explanation == "wrong object"
        fake.script = [completion('{"abandon": "the stage cannot be repaired"}')]
        assert ask_coach(coach, request(), CoachContext(0, STAGES)).response.status == "abandoned"
        coach.close()
    finally:
        fake.close()
