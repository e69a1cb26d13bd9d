"""OpenAIChatAgent against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import time

import pytest

from magma_core.agents import OpenAIChatAgent, usage_of
from magma_core.agents.openai_chat import json_schema_for, tool_schemas

from .agent_helpers import completion, make_request, tool_call


def _agent(fake, **kw) -> OpenAIChatAgent:
    options = {"timeout": 5.0, "retries": 1, "backoff": 0.01, "api_key_env": "MAGMA_TEST_KEY"}
    return OpenAIChatAgent(fake.base_url, "fake-model", **{**options, **kw})


def test_tool_call_single_robot(fake_openai, monkeypatch):
    monkeypatch.setenv("MAGMA_TEST_KEY", "sk-test")
    fake_openai.script = [completion(None, [tool_call("pick", {"object_name": "cup"})])]
    out = _agent(fake_openai).respond(make_request(memory={"notes": "kept"}))[0]
    assert out.status == "completed"
    call = out.output.tool_calls[0]
    assert (call.name, call.arguments, call.target_robot_name) == ("pick", {"object_name": "cup"}, "r1")
    sent = fake_openai.requests[0]
    assert sent["model"] == "fake-model" and fake_openai.headers[0]["Authorization"] == "Bearer sk-test"
    pick = sent["tools"][0]["function"]
    assert pick["parameters"] == {
        "type": "object",
        "properties": {"object_name": {"type": "string", "description": "what to pick"},
                       "speed": {"type": "number", "description": "how fast"}},
        "required": ["object_name"],
    }
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "r1" in sent["messages"][0]["content"]
    assert "Robots: r1." in sent["messages"][0]["content"]
    assert sent["tool_choice"] == "auto" and sent["max_tokens"] == 1024  # the defaults
    # memory: other keys kept, the turn appended to the history
    assert out.memory["notes"] == "kept"
    assert [m["role"] for m in out.memory["history"]] == ["user", "assistant"]
    # usage and latency recorded
    usage = usage_of(out)
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (11, 7, 18)
    assert usage["latency_s"] > 0 and out.internal_steps[0]["output_raw"]


def test_several_robots_need_a_robot_argument(fake_openai):
    fake_openai.script = [
        completion(None, [tool_call("pick", {"object_name": "cup", "robot": "r2"})]),
        completion(None, [tool_call("pick", {"object_name": "cup"})]),
        completion(None, [tool_call("pick", {"object_name": "cup", "robot": "r9"})]),
    ]
    agent = _agent(fake_openai)
    ok = agent.respond(make_request(robots=["r1", "r2"]))[0]
    assert ok.output.tool_calls[0].target_robot_name == "r2"
    assert ok.output.tool_calls[0].arguments == {"object_name": "cup"}
    schema = fake_openai.requests[0]["tools"][0]["function"]["parameters"]
    assert schema["required"][0] == "robot" and schema["properties"]["robot"]["enum"] == ["r1", "r2"]
    missing = agent.respond(make_request(robots=["r1", "r2"]))[0]
    assert missing.status == "error" and missing.error.code == "missing_robot"
    unknown = agent.respond(make_request(robots=["r1", "r2"]))[0]
    assert unknown.error.code == "unknown_robot" and "r9" in unknown.error.message


def test_plain_message_becomes_say(fake_openai):
    fake_openai.script = [completion("<think>hmm</think> The cup is on the table.")]
    out = _agent(fake_openai).respond(make_request())[0]
    assert out.output.say == "The cup is on the table." and out.output.tool_calls == []


@pytest.mark.parametrize("reply, code", [
    (completion(None, [tool_call("pick", '{"object_name": "cup"')]), "bad_arguments"),
    (completion(None, [tool_call("pick", "[1, 2]")]), "bad_arguments"),
    (completion(None, [tool_call("fly", {})]), "unknown_tool"),
    (completion(None, [{"id": "x", "type": "function"}]), "invalid_reply"),
    ({"choices": []}, "invalid_reply"),
    ((200, "this is not json"), "invalid_reply"),
    ((404, {"error": "no such model"}), "http_error"),
])
def test_malformed_replies_become_errors(fake_openai, reply, code):
    fake_openai.script = [reply]
    memory = {"history": [{"role": "user", "content": "earlier"}]}
    out = _agent(fake_openai).respond(make_request(memory=memory))[0]
    assert out.status == "error" and out.error.code == code and out.error.component == "openai_chat"
    if code == "http_error":  # not reached: the same input is sent again, the memory is kept
        assert out.memory == memory
    else:  # the instruction stays in the conversation, the bad reply does not
        assert out.memory["history"] == [*memory["history"], {"role": "user", "content": "Pick the cup."}]
        assert "reply was:" in out.error.message
    assert out.internal_steps and out.internal_steps[0]["output_raw"]
    assert out.internal_steps[0]["request"]["messages"][-1]["content"] == "Pick the cup."


def test_http_500_is_retried_then_fails(fake_openai):
    fake_openai.script = [(500, {"error": "boom"}), completion("recovered")]
    out = _agent(fake_openai, retries=1).respond(make_request())[0]
    assert out.output.say == "recovered" and out.internal_steps[0]["attempts"] == 2
    fake_openai.requests.clear()
    fake_openai.script = [(500, {"error": "boom"})]
    failed = _agent(fake_openai, retries=2).respond(make_request())[0]
    assert failed.error.code == "http_error" and "HTTP 500" in failed.error.message
    assert len(fake_openai.requests) == 3


def test_hang_past_the_timeout(fake_openai):
    fake_openai.script = [("hang", 1.5)]
    start = time.monotonic()
    out = _agent(fake_openai, timeout=0.3, retries=1).respond(make_request())[0]
    assert time.monotonic() - start < 1.4
    assert out.error.code == "timeout" and "2 attempts" in out.error.message


def test_conversation_carries_tool_results(fake_openai):
    fake_openai.script = [
        completion("Picking.", [tool_call("pick", {"object_name": "cup"}, "c1"), tool_call("wait", {}, "c2")]),
        completion("Done."),
    ]
    agent = _agent(fake_openai)
    first = agent.respond(make_request())[0]
    assert first.output.say == "Picking." and len(first.output.tool_calls) == 2
    second = agent.respond(make_request(memory=first.memory, kind="env", content='{"ok": true}'))[0]
    messages = fake_openai.requests[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'}
    assert messages[4]["tool_call_id"] == "c2"
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {"object_name": "cup"}
    assert [m["role"] for m in second.memory["history"]] == ["user", "assistant", "tool", "tool", "assistant"]
    third = agent.respond(make_request(memory=second.memory, kind="env", content="stage done"))
    assert fake_openai.requests[2]["messages"][-1] == {"role": "user", "content": "[environment] stage done"}
    assert third[0].status == "completed"


def test_candidates_sampling_and_bad_memory(fake_openai):
    fake_openai.script = [completion("hi")]
    agent = _agent(fake_openai, temperature=0.7, concurrency=3)
    outs = agent.respond(make_request(num_outputs=3, ids=(4, 2)))
    assert [(o.source_id, o.candidate_index) for o in outs] == [(4, 0), (4, 1), (4, 2), (2, 0), (2, 1), (2, 2)]
    assert len(fake_openai.requests) == 6 and fake_openai.requests[0]["temperature"] == 0.7
    request = make_request()
    request.inputs[0].extra_keys["inference_mode"] = True
    agent.respond(request)
    assert fake_openai.requests[-1]["temperature"] == 0.0
    bad = agent.respond(make_request(memory={"history": "oops"}))[0]
    assert bad.error.code == "invalid_memory"


def test_type_mapping():
    assert json_schema_for("str") == {"type": "string"}
    assert json_schema_for("int") == {"type": "integer"}
    assert json_schema_for("bool") == {"type": "boolean"}
    assert json_schema_for("dict") == {"type": "object"}
    assert json_schema_for("list[float]") == {"type": "array", "items": {"type": "number"}}
    assert json_schema_for("tuple[float, float, float]") == {"type": "array", "items": {"type": "number"}}
    assert json_schema_for("Optional[int]") == {"type": "integer"}
    assert json_schema_for("str | None") == {"type": "string"}
    assert json_schema_for("Pose") == {} and json_schema_for(None) == {}


def test_tool_schemas_robot_argument_clash_and_names():
    tools = [{"name": "move.to", "parameters": {"robot": {"type": "str"}}}, {"name": "move_to", "parameters": {}}]
    schemas, names, robot_param = tool_schemas(tools, ["a", "b"])
    assert robot_param == "target_robot_name"
    assert names == {"move_to": "move.to", "move_to_2": "move_to"}
    assert schemas[0]["function"]["parameters"]["required"] == ["target_robot_name", "robot"]
    json_schema = {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
    schemas, _, robot_param = tool_schemas([{"name": "t", "parameters": json_schema}], ["a"])
    assert robot_param is None and schemas[0]["function"]["parameters"] == json_schema
