"""Several backends for one model role: failover and round robin across real loopback
OpenAI-compatible servers, for the agent and the judge; the spec and the config-file forms."""

from __future__ import annotations

import pytest

from magma_core.agents.backends import BackendPool
from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.spec import AgentSpecError, from_spec, model_facts, parse_spec
from magma_core.judge.openai_judge import from_spec as judge_from_spec

from .agent_helpers import FakeOpenAI, completion, make_request, tool_call


@pytest.fixture
def two():
    servers = FakeOpenAI(), FakeOpenAI()
    yield servers
    for s in servers:
        s.close()


def test_the_spec_lists_backends_and_a_routing(two):
    a, b = two
    spec = parse_spec(f"openai:m1@{a.base_url},openai:m2@{b.base_url},round-robin")
    assert (spec.kind, spec.model, spec.base_url, spec.routing) == ("openai", "m1", a.base_url, "round-robin")
    assert spec.backends == ((a.base_url, "m1"), (b.base_url, "m2"))
    assert model_facts(f"openai:m1@{a.base_url},openai:m2@{b.base_url}")["backends"] == [
        f"m1@{a.base_url}", f"m2@{b.base_url}"]
    assert parse_spec(f"openai:m1@{a.base_url}").backends == ()
    with pytest.raises(AgentSpecError):
        parse_spec("trace,noisy-trace")


def test_failover_moves_on_when_a_backend_cannot_answer(two):
    down, up = two
    down.script = [(503, {"error": "overloaded"})]
    up.script = [completion(None, [tool_call("pick", {"object_name": "cup"})])]
    agent = from_spec(f"openai:m@{down.base_url},openai:m2@{up.base_url}",
                      chat_options=ChatOptions(retries=0, timeout=5.0))
    assert isinstance(agent.client, BackendPool) and agent.client.base_url == down.base_url
    out = agent.respond(make_request())[0]
    assert out.status == "completed" and out.output.tool_calls[0].name == "pick"
    assert len(down.requests) == 1 and up.requests[0]["model"] == "m2"
    log = out.internal_steps[0]["attempt_log"]
    assert [e["backend"] for e in log] == [down.base_url, up.base_url]
    assert [e["outcome"] for e in log][-1] == "ok"
    agent.respond(make_request())
    assert len(down.requests) == 2  # failover always tries the first backend first


def test_round_robin_takes_turns_and_all_failing_names_every_backend(two):
    a, b = two
    for s in two:
        s.script = [completion("hello")]
    agent = from_spec(f"openai:m@{a.base_url},openai:m@{b.base_url},round-robin",
                      chat_options=ChatOptions(retries=0, timeout=5.0))
    for _ in range(4):
        agent.respond(make_request())
    assert (len(a.requests), len(b.requests)) == (2, 2)
    for s in two:
        s.script = [(500, {"error": "down"})]
    out = agent.respond(make_request())[0]
    assert out.status == "error" and out.error.message.startswith("all 2 backends failed: m@")
    assert a.base_url in out.error.message and b.base_url in out.error.message


def test_the_judge_fails_over_too(two):
    down, up = two
    down.script = [(502, {"error": "bad gateway"})]
    up.script = [completion('{"verdict": true, "explanation": "fine"}')]
    judge = judge_from_spec(f"openai:j@{down.base_url},openai:j@{up.base_url}", retries=0)
    verdict = judge.judge("say the colour", "What colour?", "Red.")
    assert verdict.ok and len(up.requests) == 1


def test_a_config_file_lists_a_roles_backends(tmp_path):
    from magma_core.cli import build_parser
    from magma_core.cli.config_file import expand_config

    path = tmp_path / "c.yaml"
    path.write_text("judge: [openai:j@http://127.0.0.1:1/v1, openai:j@http://127.0.0.1:2/v1, round-robin]\n")
    parser = build_parser()
    args = parser.parse_args(expand_config(parser, ["run", "cube.PickPlace", "--config", str(path)]))
    assert args.judge == "openai:j@http://127.0.0.1:1/v1,openai:j@http://127.0.0.1:2/v1,round-robin"
    assert parse_spec(args.judge).routing == "round-robin"
