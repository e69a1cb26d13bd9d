"""The OpenAI-compatible agent against a loopback server shaped on llama.cpp's (issue 11):
tool_choice, runaway generation, visible retries, HTML escaping, dropped tool messages, a
conversation that stays true after a malformed reply, the exact request stored."""

from __future__ import annotations

import json
import threading
import time

import pytest

from magma_core.agents import OpenAIChatAgent
from magma_core.agents.chat_options import ChatOptions, ChatOptionsError
from magma_core.protocol.agent import AgentInput, AgentRequest

from .agent_helpers import completion, make_request, tool_call
from .llama_fake import LlamaShapedServer

CUBE_TOOLS = [
    {"name": "pick", "description": "Pick up an object.",
     "parameters": {"object": {"description": "name of the object", "type": "str", "required": True,
                               "values_from": "objects"}}},
    {"name": "place", "description": "Place the held object.",
     "parameters": {"area": {"description": "name of the area", "type": "str", "required": True,
                             "values_from": "areas"}}},
]
ATTRIBUTES = {"known_robots": ["panda"], "objects": ["red_cube"], "areas": ["bin", "shelf"]}


def _request(kind: str = "user", content: str = "Put the red cube in the bin.", memory=None) -> AgentRequest:
    return AgentRequest(request_id="r", inputs=[AgentInput(
        id=0, instruction={"type": kind, "content": content}, tools=CUBE_TOOLS,
        attributes=ATTRIBUTES, memory=memory or {})])


def _agent(server, notices=None, **options) -> OpenAIChatAgent:
    return OpenAIChatAgent(server.base_url, "smollm", options=ChatOptions(**options), backoff=0.01,
                           api_key_env=None, on_notice=(notices.append if notices is not None else None))


def _picker(prompt: str, body: dict) -> tuple:
    return ("call", "pick", '{"object": "red_cube"}')


@pytest.fixture
def llama():
    servers = []

    def start(policy, **kw) -> LlamaShapedServer:
        servers.append(LlamaShapedServer(policy, **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_tools_are_used_only_with_tool_choice_and_a_warning_says_so(llama):
    server = llama(_picker)
    notices: list[str] = []
    ignored = _agent(server, notices, tool_choice="omit")
    for _ in range(3):
        out = ignored.respond(_request())[0]
        assert out.status == "completed" and out.output.tool_calls == []
    assert "tool_choice" not in server.requests[0] and "functions.pick" not in server.prompts[0]
    assert len(notices) == 1 and "--tool-choice" in notices[0] and "3 replies" in notices[0]
    used = _agent(server).respond(_request())[0]  # the default: tool_choice auto
    assert server.requests[-1]["tool_choice"] == "auto" and "functions.pick" in server.prompts[-1]
    call = used.output.tool_calls[0]
    assert (call.name, call.arguments, call.target_robot_name) == ("pick", {"object": "red_cube"}, "panda")


def test_the_no_tool_call_warning_names_a_chat_format_that_drops_tools(llama):
    """With tool_choice sent, a model that never calls points at the chat format, not at
    --tool-choice."""
    server = llama(lambda prompt, body: ("say", "I will not call."))
    notices: list[str] = []
    agent = _agent(server, notices)
    for _ in range(3):
        agent.respond(_request())
    assert server.requests[0]["tool_choice"] == "auto"
    [warning] = notices
    assert "chat format may not render the tools" in warning and "--constrain" in warning
    assert "see --tool-choice" not in warning


def test_runaway_generation_is_bounded_by_max_tokens(llama):
    server = llama(lambda prompt, body: ("runaway",), runaway_s=30)
    start = time.monotonic()
    out = _agent(server, max_tokens=64).respond(_request())[0]
    assert time.monotonic() - start < 5
    assert server.requests[0]["max_tokens"] == 64
    step = out.internal_steps[0]
    assert step["finish_reason"] == "length" and step["usage"]["completion_tokens"] == 64


def test_timeouts_and_retries_are_shown_as_they_happen_and_recorded(llama):
    server = llama(lambda prompt, body: ("runaway",), runaway_s=5)
    notices: list[str] = []
    seen_at: list[float] = []
    agent = _agent(server, notices, max_tokens=0, timeout=0.3, retries=1)
    agent.on_notice = lambda line: (notices.append(line), seen_at.append(time.monotonic()))
    start = time.monotonic()
    out = agent.respond(_request())[0]
    assert "max_tokens" not in server.requests[0]
    assert out.error.code == "timeout" and "2 attempts" in out.error.message
    assert len(notices) == 2 and "attempt 1/2" in notices[0] and "retrying" in notices[0]
    assert "attempt 2/2" in notices[1] and "giving up" in notices[1]
    assert seen_at[0] - start < 1.0  # the first timeout is shown before the retry ends
    log = out.internal_steps[0]["attempt_log"]
    assert [e["outcome"] for e in log] == ["timeout", "timeout"] and all(e["latency_s"] >= 0.3 for e in log)
    assert out.internal_steps[0]["attempts"] == 2


def test_tokens_of_every_attempt_are_counted(fake_openai):
    usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
    fake_openai.script = [(503, {"error": "busy", "usage": usage}), completion("ok")]
    out = OpenAIChatAgent(fake_openai.base_url, "m", backoff=0.01, api_key_env=None).respond(make_request())[0]
    step = out.internal_steps[0]
    assert [e["usage"].get("total_tokens") for e in step["attempt_log"]] == [105, 18]
    assert step["usage"]["total_tokens"] == 123 and step["attempts"] == 2


def test_html_escaped_replies_are_decoded(llama):
    server = llama(lambda prompt, body: ("say", "I'm done: the cube is in the \"bin\"."))
    out = _agent(server).respond(_request())[0]
    assert "&#x27;" in json.loads(out.internal_steps[0]["output_raw"])["choices"][0]["message"]["content"]
    assert out.output.say == "I'm done: the cube is in the \"bin\"."


def _report(infos: str, failure: str | None = None) -> str:
    status = {"infos": infos, "previous_tool_call": [{"tool": "place"}]}
    if failure:
        status["failure_reason"] = failure
    return json.dumps(status)


def test_tool_messages_dropped_by_the_template_can_go_as_user_messages(llama):
    server = llama(_picker)
    first = _agent(server).respond(_request())[0]
    report = _report("Picked red_cube.")
    _agent(server).respond(_request("env", report, first.memory))
    assert "Picked red_cube." not in server.prompts[-1]  # the tool message was dropped
    _agent(server, report_role="user").respond(_request("env", report, first.memory))
    assert "[environment] Picked red_cube." in server.prompts[-1]
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent[-2:]] == ["tool", "user"]  # still a valid conversation


def test_the_conversation_stays_true_after_a_malformed_reply(fake_openai):
    """The issue's case: a place call failed; the next reply is malformed; the model must
    still see the report on the place call, and its own bad text in the failure."""
    fake_openai.script = [
        completion(None, [tool_call("place", {"area": "moon"}, "c1")]),
        completion(None, [tool_call("pick", '{"object": red_cube}', "c2")]),
        completion("Sorry."),
    ]
    agent = OpenAIChatAgent(fake_openai.base_url, "m", api_key_env=None)
    first = agent.respond(_request())[0]
    report = _report("", "Unknown area 'moon'.")
    bad = agent.respond(_request("env", report, first.memory))[0]
    assert bad.status == "error" and bad.error.code == "bad_arguments"
    assert 'pick({"object": red_cube})' in bad.error.message
    engine_report = _report("", f"The agent gave no decision ({bad.error.code}): {bad.error.message}")
    agent.respond(_request("env", engine_report, bad.memory))
    sent = fake_openai.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3] == {"role": "tool", "tool_call_id": "c1", "content": "Failed: Unknown area 'moon'."}
    assert sent[4]["content"].startswith("[environment] Failed: The agent gave no decision (bad_arguments)")
    assert 'pick({"object": red_cube})' in sent[4]["content"]


def test_arguments_with_literal_newlines_are_accepted(fake_openai):
    fake_openai.script = [completion(None, [tool_call("pick", '{"object_name": "cup\nwith handle"}')])]
    out = OpenAIChatAgent(fake_openai.base_url, "m", api_key_env=None).respond(make_request())[0]
    assert out.output.tool_calls[0].arguments == {"object_name": "cup\nwith handle"}


def test_every_step_keeps_the_exact_request(llama):
    server = llama(_picker)
    out = _agent(server, temperature=0.2, top_p=0.9, seed=7, max_tokens=100,
                 extra_body={"min_p": 0.05}).respond(_request())[0]
    step = out.internal_steps[0]
    assert step["request"] == server.requests[0]
    assert {k: step["request"][k] for k in ("temperature", "top_p", "seed", "max_tokens", "min_p", "tool_choice")} == {
        "temperature": 0.2, "top_p": 0.9, "seed": 7, "max_tokens": 100, "min_p": 0.05, "tool_choice": "auto"}
    assert json.loads(step["output_raw"])["choices"][0]["message"]["tool_calls"]


def test_compact_prompting_enums_names_and_plain_reports(llama):
    server = llama(_picker)
    agent = _agent(server)
    first = agent.respond(_request())[0]
    body = server.requests[0]
    pick, place = (t["function"]["parameters"]["properties"] for t in body["tools"])
    assert pick["object"]["enum"] == ["red_cube"] and place["area"]["enum"] == ["bin", "shelf"]
    system = body["messages"][0]["content"]
    assert "Use only the names listed below" in system and "Objects: red_cube." in system and "Areas: bin, shelf." in system
    agent.respond(_request("env", _report("Picked red_cube."), first.memory))
    assert server.requests[1]["messages"][-1]["content"] == "Picked red_cube."
    raw = _agent(server, prompt_style="raw")
    raw.respond(_request("env", _report("Picked red_cube."), first.memory))
    assert json.loads(server.requests[2]["messages"][-1]["content"])["infos"] == "Picked red_cube."
    assert "enum" not in server.requests[2]["tools"][0]["function"]["parameters"]["properties"]["object"]


def test_cancel_stops_a_request_in_flight(llama):
    server = llama(lambda prompt, body: ("runaway",), runaway_s=20)
    agent = _agent(server, max_tokens=0, timeout=60)
    outputs = []
    thread = threading.Thread(target=lambda: outputs.append(agent.respond(_request())))
    thread.start()
    time.sleep(0.3)
    start = time.monotonic()
    agent.cancel()
    thread.join(5)
    assert time.monotonic() - start < 1.0 and outputs[0][0].error.code == "cancelled"


@pytest.mark.parametrize("options, message", [
    ({"tool_choice": "always"}, "tool_choice must be one of"),
    ({"max_tokens": -1}, "max_tokens must be at least 0"),
    ({"temperature": "hot"}, "temperature must be a number"),
    ({"timeout": 0}, "timeout must be more than 0"),
    ({"extra_body": {"messages": []}}, "extra_body cannot set messages"),
    ({"colour": 1}, "unknown option colour"),
])
def test_bad_options_are_refused_in_one_line(options, message):
    with pytest.raises(ChatOptionsError, match=message):
        ChatOptions.from_mapping(options)


def test_options_from_a_config_file_and_flags_over_it(tmp_path):
    config = tmp_path / "agent.toml"
    config.write_text('[agent]\nmax_tokens = 256\ntemperature = 0.1\nextra_body = { min_p = 0.05 }\n')
    from_file = ChatOptions.from_file(config)
    merged = ChatOptions(temperature=0.5).merged_over(from_file)
    assert merged.body_params(True) == {"tool_choice": "auto", "max_tokens": 256, "temperature": 0.5, "min_p": 0.05}
    assert ChatOptions(max_tokens=0, tool_choice="omit").body_params(True) == {}
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(ChatOptionsError, match="not valid JSON"):
        ChatOptions.from_file(tmp_path / "bad.json")


def test_plain_reports_keep_the_users_words_and_leave_other_text_alone():
    from magma_core.agents.chat_prompt import plain_report

    assert plain_report(_report("Placed.") + "\n\nNow the blue one.") == "Placed.\n\nNow the blue one."
    assert plain_report(_report("", "Unknown area.")) == "Failed: Unknown area."
    assert plain_report('{"ok": true}') == '{"ok": true}' and plain_report("stage done") == "stage done"
