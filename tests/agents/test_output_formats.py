"""The ``openai:`` agent's output formats beside native tool calls, against a scripted
OpenAI-compatible server on loopback: the predecessor's ``{say, action}`` JSON, a prompt
template with permanent rules and a summary, and the summarising agent."""

from __future__ import annotations

import json

import pytest

from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.output_formats import FormattedChatAgent
from magma_core.agents.spec import from_spec
from magma_core.agents.summarising import SummarisingChatAgent
from magma_core.user_error import UserError

from .agent_helpers import completion, make_request


def _agent(fake, **options):
    return from_spec(f"openai:fake-model@{fake.base_url}",
                     chat_options=ChatOptions(timeout=5.0, retries=0, **options))


def test_the_options_select_the_agent(fake_openai):
    assert type(_agent(fake_openai, output_format="json")) is FormattedChatAgent
    assert type(_agent(fake_openai, summarise_after=100)) is SummarisingChatAgent
    assert type(_agent(fake_openai)).__name__ == "OpenAIChatAgent"


def test_json_format_sends_no_tools_and_reads_say_and_action(fake_openai):
    fake_openai.script = [
        completion(json.dumps({"say": "", "action": {"r2": {"name": "pick", "arguments": {"object_name": "cup"}}}})),
        completion('{"say": "Done.", "action": {}}'),
    ]
    agent = _agent(fake_openai, output_format="json")
    act = agent.respond(make_request(robots=["r1", "r2"]))[0]
    assert act.status == "completed"
    call = act.output.tool_calls[0]
    assert (call.name, call.arguments, call.target_robot_name) == ("pick", {"object_name": "cup"}, "r2")
    sent = fake_openai.requests[0]
    assert "tools" not in sent and "tool_choice" not in sent
    system = sent["messages"][0]["content"]
    assert '{"say": "", "action": {"r1": {"name": "TOOL"' in system and '"name": "pick"' in system
    assert '"robot"' not in system  # the robot is the action's key, not an argument
    assert act.memory["history"][-1] == {"role": "assistant", "content": json.dumps(
        {"say": "", "action": {"r2": {"name": "pick", "arguments": {"object_name": "cup"}}}})}
    say = agent.respond(make_request(robots=["r1", "r2"], memory=act.memory, kind="env", content="picked"))[0]
    assert say.output.say == "Done." and say.output.tool_calls == []


@pytest.mark.parametrize("reply, code", [
    ('```json\n{"say": "hi", "action": {}}\n```', "invalid_json"),  # a fence
    ('{"say": "hi", "action": {}} and more', "invalid_json"),  # extra text
    ('{"say": "hi"}', "invalid_json"),
    ('{"say": "I pick", "action": {"r1": {"name": "pick", "arguments": {}}}}', "invalid_json"),
    ('{"say": "", "action": {"r9": {"name": "pick", "arguments": {}}}}', "unknown_robot"),
    ('{"say": "", "action": {"r1": {"name": "fly", "arguments": {}}}}', "unknown_tool"),
    ('{"say": "", "action": {"r1": {"name": "pick", "arguments": [1]}}}', "bad_arguments"),
])
def test_json_format_refuses_what_the_predecessor_refuses(fake_openai, reply, code):
    fake_openai.script = [completion(reply)]
    out = _agent(fake_openai, output_format="json").respond(make_request())[0]
    assert out.status == "error" and out.error.code == code
    assert reply[:20] in out.error.message  # the reply is quoted


def test_a_prompt_template_gets_rules_summary_and_attributes(fake_openai, tmp_path):
    template = tmp_path / "prompt.jinja"
    template.write_text(
        "Rules:{% for r in permanent_rules %} [{{ r }}]{% endfor %}\nSummary: {{ summary }}\n"
        "Robots: {{ task_attributes.known_robots | join(',') }}; tools: "
        "{% for t in tools %}{{ t.function.name }} {% endfor %}\n"
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}")
    fake_openai.script = [completion('{"say": "ok", "action": {}}')]
    agent = _agent(fake_openai, output_format="json", prompt_template=str(template))
    memory = {"memory_list": ["never drop the cup"], "summary": "picked the cup earlier",
              "history": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]}
    out = agent.respond(make_request(memory=memory))[0]
    assert out.status == "completed"
    sent = fake_openai.requests[0]["messages"]
    assert len(sent) == 1 and sent[0]["role"] == "user"  # the template renders the whole prompt
    text = sent[0]["content"]
    assert "Rules: [never drop the cup]" in text and "Summary: picked the cup earlier" in text
    assert "Robots: r1; tools: pick wait" in text
    assert "<user>hello</user>\n<assistant>hi</assistant>\n<user>Pick the cup.</user>" in text


def test_a_system_template_keeps_the_chat_and_bad_templates_are_one_line(fake_openai, tmp_path):
    system = tmp_path / "system.jinja"
    system.write_text("You are careful. {{ permanent_rules | length }} rules.")
    fake_openai.script = [completion("fine")]
    agent = _agent(fake_openai, prompt_template=str(system))
    agent.respond(make_request(memory={"memory_list": ["a", "b"]}))
    sent = fake_openai.requests[0]
    assert sent["messages"][0] == {"role": "system", "content": "You are careful. 2 rules."}
    assert sent["messages"][1]["role"] == "user" and sent["tools"]  # native tools still
    (tmp_path / "bad.jinja").write_text("{{ secrets }}")
    with pytest.raises(UserError, match="uses secrets: it may use messages, tools"):
        _agent(fake_openai, prompt_template=str(tmp_path / "bad.jinja"))
    with pytest.raises(UserError, match="cannot read prompt template"):
        _agent(fake_openai, prompt_template=str(tmp_path / "none.jinja"))


def test_the_summarising_agent_condenses_past_the_threshold(fake_openai):
    long_history = [{"role": "user", "content": "x" * 300}, {"role": "assistant", "content": "ok"}]
    fake_openai.script = [completion("The user asked for x; done."),
                          completion('{"say": "a", "action": {}}'), completion('{"say": "b", "action": {}}')]
    agent = _agent(fake_openai, output_format="json", summarise_after=200)
    outs = agent.respond(make_request(memory={"history": long_history}, num_outputs=2))
    assert [o.status for o in outs] == ["completed", "completed"]
    assert len(fake_openai.requests) == 3  # one summary shared by both candidates
    summariser = fake_openai.requests[0]
    assert "tools" not in summariser and summariser["temperature"] == 0.0
    assert "x" * 300 in summariser["messages"][1]["content"]
    for out, sent in zip(outs, fake_openai.requests[1:], strict=True):
        assert out.memory["summary"] == "The user asked for x; done."
        assert [m["role"] for m in out.memory["history"]] == ["user", "assistant"]  # cleared, then this turn
        assert "Summary of the conversation so far:\nThe user asked for x; done." in sent["messages"][0]["content"]
        assert "x" * 300 not in json.dumps(sent["messages"])
        assert out.internal_steps[0]["component"] == "summariser"
    short = agent.respond(make_request(memory={"history": long_history[1:]}))
    assert len(fake_openai.requests) == 3 + 1 and short[0].status == "completed"  # under the threshold: no summary
    assert "summary" not in short[0].memory


def test_a_failed_summary_fails_every_candidate_without_asking_the_decision(fake_openai):
    fake_openai.script = [(500, "down")]
    agent = _agent(fake_openai, summarise_after=10)
    outs = agent.respond(make_request(memory={"history": [{"role": "user", "content": "y" * 50}]}, num_outputs=2))
    assert [o.error.code for o in outs] == ["summary_failed", "summary_failed"]
    assert len(fake_openai.requests) == 1
    assert outs[0].memory["history"][0]["content"] == "y" * 50  # the memory is unchanged
