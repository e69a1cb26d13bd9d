"""serve_chat.py's reply parsing and HTTP routes, without a model: raw ``<tool_call>`` text
becomes OpenAI ``tool_calls`` that MAGMA's own chat client and the OpenAI agent act on (a
real loopback server; a scripted stand-in for the model's text)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "training"))

import serve_chat  # noqa: E402

from magma_core.agents.chat_client import ChatClient  # noqa: E402
from magma_core.cli import main  # noqa: E402


def test_a_tool_call_block_becomes_an_openai_call():
    text = 'I will pick it.\n<tool_call>\n{"name": "pick", "arguments": {"object": "red_cube"}}\n</tool_call><|im_end|>junk'
    message = serve_chat.parse_reply(text, call_prefix="c")
    assert message["content"] == "I will pick it."
    assert message["tool_calls"] == [{"id": "c_0", "type": "function",
                                      "function": {"name": "pick", "arguments": '{"object": "red_cube"}'}}]


def test_several_calls_string_arguments_and_an_unclosed_last_block():
    text = ('<tool_call>{"name": "pick", "arguments": "{\\"object\\": \\"a\\"}"}</tool_call>\n'
            '<tool_call>{"name": "place", "arguments": {"area": "zone_b"}}')  # cut by max_tokens
    calls = serve_chat.parse_reply(text)["tool_calls"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("pick", {"object": "a"}), ("place", {"area": "zone_b"})]
    assert [c["id"] for c in calls] == ["call_0", "call_1"]


@pytest.mark.parametrize("body", ['{"name": "pick", "arguments": {"object"', '["pick"]',
                                  '{"arguments": {}}', '{"name": "pick", "arguments": [1]}'])
def test_a_block_that_is_not_a_call_stays_in_the_content(body):
    text = f"<tool_call>{body}</tool_call>"
    message = serve_chat.parse_reply(text)
    assert "tool_calls" not in message and message["content"] == text


def test_plain_text_and_an_empty_reply():
    assert serve_chat.parse_reply("The red_cube is in zone_a.<|im_end|>") == {
        "role": "assistant", "content": "The red_cube is in zone_a."}
    assert serve_chat.parse_reply("<|im_end|>") == {"role": "assistant", "content": ""}


def test_finish_reason_and_usage():
    body = {"model": "m", "messages": []}
    cut = serve_chat.response(body, "You can use the following code", 100, 8, 8, 1, "m")
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"] == {"prompt_tokens": 100, "completion_tokens": 8, "total_tokens": 108}
    called = serve_chat.response(body, '<tool_call>{"name": "pick", "arguments": {}}</tool_call>', 1, 3, 8, 2, "m")
    assert called["choices"][0]["finish_reason"] == "tool_calls"
    assert called["choices"][0]["message"]["tool_calls"][0]["id"] == "call_2_0"


class ScriptedChat:
    """Stands in for the model: raw replies in the model's ``<tool_call>`` format, in turn."""

    name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.bodies = list(replies), []

    def complete(self, body):
        self.bodies.append(body)
        text = self.replies.pop(0) if self.replies else "Done.<|im_end|>"
        return serve_chat.response(body, text, 10, 5, 64, len(self.bodies), self.name)


@pytest.fixture
def served():
    def start(replies):
        chat = ScriptedChat(replies)
        server = serve_chat.make_server(chat)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return chat, f"http://127.0.0.1:{server.server_address[1]}/v1"

    started: list = []
    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def test_the_server_listens_on_loopback_and_magmas_client_reads_its_calls(served):
    chat, url = served(['<tool_call>\n{"name": "pick", "arguments": {"object": "red_cube"}}\n</tool_call><|im_end|>'])
    assert url.startswith("http://127.0.0.1:")
    client = ChatClient(url, "scripted", retries=0)
    assert client.list_models().models == ["scripted"]
    reply = client.complete([{"role": "user", "content": "hi"}], tools=[])
    call = reply.message["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("pick", {"object": "red_cube"})
    assert reply.usage["total_tokens"] == 15


def test_bad_requests_get_a_4xx_answer(served):
    import httpx

    _, url = served([])
    assert httpx.post(f"{url}/chat/completions", content=b"not json").status_code == 400
    assert httpx.post(f"{url}/chat/completions", json={"model": "m"}).status_code == 400
    assert httpx.get(f"{url}/nowhere").status_code == 404


@pytest.mark.sim
def test_the_openai_agent_solves_a_short_task_through_the_server(served, tmp_path):
    """The engine acts on the calls the server parsed from raw text: a ShortSorting task done."""
    from magma_core.bench.task_spec import task_to_spec
    from magma_scenarios.sorting.definitions import ShortSorting

    events = task_to_spec(ShortSorting().generate(3))["perfect_trace"]["events"]
    replies = [f'<tool_call>\n{json.dumps({"name": c["name"], "arguments": c["arguments"]})}\n</tool_call><|im_end|>'
               for e in events if e["type"] == "tool_calls" for c in e["calls"]]
    replies.append("The cube is in its zone.<|im_end|>")
    chat, url = served(replies)
    out = tmp_path / "runs"
    assert main(["gen", "sorting.ShortSorting", "--agent", f"openai:scripted@{url}", "--trees", "1",
                 "--seed", "3", "--branches", "1", "--slots", "1", "--out", str(out), "--name", "g"]) == 0
    assert main(["export", "g", "--out", str(out), "--validation-ratio", "0"]) == 0
    rows = (out / "exports" / "g-chat-jsonl" / "chat_train.jsonl").read_text().splitlines()
    assert len(rows) == 1  # the branch succeeded: kept and exported
    assert chat.bodies[0]["tools"] and chat.bodies[0]["messages"][0]["role"] == "system"
