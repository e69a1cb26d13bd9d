"""Checking agents before use: ``OpenAIChatAgent.check()`` against loopback servers,
``build_agent`` refusing an unreachable model server, and ``magma serve-agent`` refusing an
unreachable upstream in one line."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from magma_core.agents import AgentCheckError
from magma_core.agents.openai_chat import OpenAIChatAgent
from magma_core.cli import CliError
from magma_core.runs.assembly import build_run_agent as build_agent

from .test_serve_agent_cli import _first_line


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _models(*ids: str) -> dict:
    return {"object": "list", "data": [{"id": i, "object": "model", "owned_by": "x"} for i in ids]}


def _agent(base_url: str, model: str = "m", **options) -> OpenAIChatAgent:
    return OpenAIChatAgent(base_url, model, **options)


def test_unreachable_endpoint_is_refused_quickly():
    agent = _agent(f"http://127.0.0.1:{_closed_port()}/v1", retries=3, backoff=5.0)
    start = time.monotonic()
    with pytest.raises(AgentCheckError, match="unreachable"):
        agent.check()
    assert time.monotonic() - start < 5  # no retries, no backoff
    agent.close()


def test_hanging_endpoint_times_out(fake_openai):
    fake_openai.routes["GET /v1/models"] = [("hang", 3)]
    with _agent(fake_openai.base_url) as agent, pytest.raises(AgentCheckError, match="unreachable.*within"):
        agent.check(timeout=0.5)


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_names_the_variable(fake_openai, monkeypatch, status):
    monkeypatch.setenv("MY_LLM_KEY", "wrong")
    fake_openai.routes["GET /v1/models"] = [(status, {"error": {"message": "Incorrect API key"}})]
    with _agent(fake_openai.base_url, api_key_env="MY_LLM_KEY") as agent:
        with pytest.raises(AgentCheckError, match=rf"HTTP {status}.*MY_LLM_KEY was refused"):
            agent.check()
    assert fake_openai.headers[-1]["Authorization"] == "Bearer wrong"


def test_missing_key_says_which_variable_to_set(fake_openai, monkeypatch):
    monkeypatch.delenv("MY_LLM_KEY", raising=False)
    fake_openai.routes["GET /v1/models"] = [(401, "unauthorized")]
    with _agent(fake_openai.base_url, api_key_env="MY_LLM_KEY") as agent:
        with pytest.raises(AgentCheckError, match=r"\$MY_LLM_KEY is not set"):
            agent.check()


@pytest.mark.parametrize("status", [404, 405])
def test_servers_without_models_are_accepted(fake_openai, status):
    if status == 405:
        fake_openai.routes["GET /v1/models"] = [(405, "method not allowed")]
    with _agent(fake_openai.base_url) as agent:
        assert agent.check().agent_id == "magma.openai_chat"
        assert agent.check_warning is None
    assert fake_openai.calls == ["GET /v1/models"]


@pytest.mark.parametrize("body", [{"models": "here"}, [1, 2], "not json", {"data": [{"name": "x"}]}])
def test_a_body_that_is_no_model_list_is_accepted(fake_openai, body):
    fake_openai.routes["GET /v1/models"] = [(200, body)]
    with _agent(fake_openai.base_url) as agent:
        agent.check()
        assert agent.check_warning is None


def test_listed_model_is_accepted_without_warning(fake_openai):
    fake_openai.routes["GET /v1/models"] = [_models("other", "qwen2.5:7b")]
    with _agent(fake_openai.base_url, "qwen2.5:7b") as agent:
        agent.check()
        assert agent.check_warning is None


def test_ollama_latest_tag_counts_as_listed(fake_openai):
    fake_openai.routes["GET /v1/models"] = [_models("llama3:latest")]
    with _agent(fake_openai.base_url, "llama3") as agent:
        agent.check()
        assert agent.check_warning is None


def test_unlisted_model_is_accepted_with_a_warning(fake_openai):
    fake_openai.routes["GET /v1/models"] = [_models("alpha", "beta")]
    with _agent(fake_openai.base_url, "gamma") as agent:
        assert agent.check().agent_id == "magma.openai_chat"
        assert "'gamma'" in agent.check_warning and "alpha, beta" in agent.check_warning
        # a later clean check clears the warning
        fake_openai.routes["GET /v1/models"] = [_models("gamma")]
        agent.check()
        assert agent.check_warning is None


def test_server_error_on_models_is_accepted_with_a_warning(fake_openai):
    fake_openai.routes["GET /v1/models"] = [(500, "boom")]
    with _agent(fake_openai.base_url, retries=2, backoff=5.0) as agent:
        agent.check()
        assert "HTTP 500" in agent.check_warning
    assert fake_openai.calls == ["GET /v1/models"]  # not retried


class _Task:
    name = "stand.In"

    def perfect_trace(self):
        return None


def test_build_agent_refuses_an_unreachable_model_server():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(CliError, match=r"agent openai:m@.* is not usable: .*unreachable") as info:
        build_agent(f"openai:m@{url}", _Task())
    assert "\n" not in str(info.value)


def test_build_agent_refuses_a_refused_key(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "bad")
    fake_openai.routes["GET /v1/models"] = [(401, "no")]
    with pytest.raises(CliError, match="OPENAI_API_KEY was refused"):
        build_agent(f"openai:m@{fake_openai.base_url}", _Task())


def test_build_agent_accepts_a_server_without_models(fake_openai):
    agent = build_agent(f"openai:m@{fake_openai.base_url}", _Task())
    try:
        assert isinstance(agent, OpenAIChatAgent)
    finally:
        agent.close()
    assert fake_openai.calls == ["GET /v1/models"]


@pytest.mark.parametrize("spec", ["openai:m@http://127.0.0.1:{port}/v1", "http://127.0.0.1:{port}"])
def test_serve_agent_refuses_an_unreachable_upstream(spec):
    proc = subprocess.run(
        [sys.executable, "-m", "magma_core.cli", "serve-agent", "--agent",
         spec.format(port=_closed_port()), "--port", "0"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "serving" not in proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("magma: error: agent "), proc.stderr
    assert "is not usable" in lines[0] and "unreachable" in lines[0]


def test_serve_agent_warns_about_an_unlisted_model(fake_openai):
    fake_openai.routes["GET /v1/models"] = [_models("alpha")]
    process = subprocess.Popen(
        [sys.executable, "-m", "magma_core.cli", "serve-agent", "--agent",
         f"openai:gamma@{fake_openai.base_url}", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = _first_line(process, timeout=120)
        assert line.startswith("serving magma.openai_chat on http://127.0.0.1:"), line
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert "magma: warning: model 'gamma' is not among" in err


@pytest.mark.parametrize(("agent_timeout", "waits"), [(0.5, 10.0), (30.0, 30.0), (120.0, 60.0), (900.0, 60.0)])
def test_the_pre_check_waits_the_agent_timeout_clamped_to_10_60_s(agent_timeout, waits):
    from magma_core.agents.openai_chat import check_timeout

    assert check_timeout(agent_timeout) == waits


def test_a_busy_server_passes_the_pre_check_of_an_agent_with_a_short_timeout(fake_openai):
    """The agent waits 1 s per reply, but its pre-check waits at least 10 s: a local server
    that answers ``/models`` after 2 s (busy with an earlier reply) is usable."""
    fake_openai.routes["GET /v1/models"] = [("hang", 2.0)]
    fake_openai.hang_reply = _models("m")
    with _agent(fake_openai.base_url, timeout=1.0) as agent:
        started = time.monotonic()
        agent.check()
        assert 2.0 <= time.monotonic() - started < 10.0
        assert agent.check_warning is None


def test_the_pre_check_gives_up_at_its_ceiling_not_the_agent_timeout(fake_openai, monkeypatch):
    """A hanging ``/models`` fails the check at the clamped wait (the ceiling lowered to 1 s
    here, for speed), although the agent would wait 300 s for a reply."""
    from magma_core.agents import openai_chat

    monkeypatch.setattr(openai_chat, "CHECK_TIMEOUT_MAX_S", 1.0)
    monkeypatch.setattr(openai_chat, "CHECK_TIMEOUT_MIN_S", 0.5)
    fake_openai.routes["GET /v1/models"] = [("hang", 4.0)]
    with _agent(fake_openai.base_url, timeout=300.0) as agent:
        started = time.monotonic()
        with pytest.raises(AgentCheckError, match="unreachable"):
            agent.check()
        assert time.monotonic() - started < 3.0
