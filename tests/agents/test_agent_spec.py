"""Agent spec strings: ``trace``, ``openai:MODEL[@BASE_URL]``, ``http://HOST:PORT``."""

from __future__ import annotations

import pytest

from magma_core.agents import (
    AgentSpec,
    AgentSpecError,
    HttpAgent,
    OpenAIChatAgent,
    TraceAgent,
    from_spec,
    parse_spec,
)
from magma_core.simulation.tasks.perfect_trace import MessageEvent, PerfectTrace


def test_parse(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert parse_spec("trace") == AgentSpec("trace")
    assert parse_spec("http://127.0.0.1:8888/") == AgentSpec("http", url="http://127.0.0.1:8888")
    assert parse_spec("openai:gpt-4o-mini") == AgentSpec("openai", model="gpt-4o-mini", base_url="https://api.openai.com/v1")
    assert parse_spec("openai:qwen2.5:7b@http://localhost:11434/v1/") == AgentSpec(
        "openai", model="qwen2.5:7b", base_url="http://localhost:11434/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm:8000/v1")
    assert parse_spec("openai:m").base_url == "http://vllm:8000/v1"
    assert parse_spec("openai:name@with-at").model == "name@with-at"


@pytest.mark.parametrize("text", ["", "gpt-4", "openai:", "openai:@http://x", "http://", "ftp://x"])
def test_parse_rejects(text):
    with pytest.raises(AgentSpecError):
        parse_spec(text)


def test_from_spec_builds_agents():
    trace = PerfectTrace([MessageEvent("hi")])
    assert isinstance(from_spec("trace", trace=trace), TraceAgent)
    with pytest.raises(AgentSpecError, match="perfect trace"):
        from_spec("trace")
    agent = from_spec("openai:m@http://127.0.0.1:1/v1", timeout=3.0)
    assert isinstance(agent, OpenAIChatAgent) and agent.client.timeout == 3.0
    assert isinstance(from_spec("http://127.0.0.1:1", retries=0), HttpAgent)
