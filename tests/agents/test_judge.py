"""OpenAIJudge against the scripted OpenAI-compatible server; AcceptAllJudge; judge specs."""

from __future__ import annotations

import pytest

from magma_core.agents import AgentSpecError
from magma_core.judge import AcceptAllJudge, Judge, OpenAIJudge, Verdict, from_spec
from magma_core.judge.openai_judge import parse_verdict

from .agent_helpers import completion


def _judge(fake, **kw) -> OpenAIJudge:
    return OpenAIJudge(fake.base_url, "judge-model", **{"retries": 0, "backoff": 0.01, "timeout": 5.0, **kw})


def test_verdicts(fake_openai):
    fake_openai.script = [completion('{"explanation": "Correct color.", "verdict": true}'),
                          completion('```json\n{"explanation": "Wrong cup.", "verdict": false}\n```')]
    judge = _judge(fake_openai)
    assert isinstance(judge, Judge)
    good = judge.judge("The answer names the red cup.", "Which cup?", "The red one.")
    assert (good.ok, good.reason, good.attempts, good.error) == (True, "Correct color.", 1, None)
    assert good.usage["total_tokens"] == 18 and good.latency_s > 0
    sent = fake_openai.requests[0]
    assert sent["temperature"] == 0.0 and "The red one." in sent["messages"][1]["content"]
    bad = judge.judge("rule", "q", "The blue one.")
    assert (bad.ok, bad.reason) == (False, "Wrong cup.")


def test_unparsable_reply_is_retried_then_fails(fake_openai):
    fake_openai.script = [completion("I think yes"), completion('{"verdict": "maybe"}'), completion('{"verdict": true}')]
    verdict = _judge(fake_openai, max_attempts=3).judge("rule", "q", "a")
    assert verdict.ok and verdict.attempts == 3 and verdict.usage["total_tokens"] == 54
    assert "That reply is invalid" in fake_openai.requests[1]["messages"][-1]["content"]
    fake_openai.script = [completion("never JSON")]
    failed = _judge(fake_openai, max_attempts=2).judge("rule", "q", "a")
    assert not failed.ok and failed.attempts == 2 and failed.error == "no JSON object in the reply"
    assert failed.reason.startswith("The text-only answer could not be validated because the judge returned an invalid response")
    assert failed.raw_output == "never JSON"


def test_transport_failure_fails_the_verdict(fake_openai):
    fake_openai.script = [(500, "down")]
    verdict = _judge(fake_openai, max_attempts=2).judge("rule", "q", "a")
    assert not verdict.ok and verdict.error.startswith("http_error")


def test_empty_answer_and_accept_all(fake_openai):
    assert not _judge(fake_openai).judge("rule", "q", "  ").ok and fake_openai.requests == []
    assert AcceptAllJudge().judge("rule", "q", "anything").ok
    assert not AcceptAllJudge().judge("rule", "q", "").ok


def test_parse_verdict_and_spec():
    assert parse_verdict('<think>{"verdict": false}</think>{"verdict": "TRUE", "explanation": "ok"}') == (True, "ok")
    with pytest.raises(ValueError):
        parse_verdict("[true]")
    assert isinstance(from_spec("none"), AcceptAllJudge)
    judge = from_spec("openai:qwen3:8b@http://127.0.0.1:11434/v1")
    assert judge.client.model == "qwen3:8b" and judge.client.base_url == "http://127.0.0.1:11434/v1"
    with pytest.raises(AgentSpecError):
        from_spec("trace")
    assert isinstance(Verdict(ok=True), Verdict)


def test_judge_takes_the_model_options_of_an_agent_config(fake_openai, tmp_path):
    """The ``[judge]`` table of an ``--agent-config`` file configures the judge as the
    ``[agent]`` table does the agent; options a judge cannot use are refused."""
    from magma_core.agents.chat_options import ChatOptions, ChatOptionsError

    config = tmp_path / "models.toml"
    config.write_text('[agent]\nmax_tokens = 50\n[judge]\nmax_tokens = 77\nseed = 5\n'
                      'extra_body = {min_p = 0.2}\n')
    assert ChatOptions.from_file(config).given() == {"max_tokens": 50}
    options = ChatOptions.from_file(config, table="judge")
    fake_openai.script = [completion('{"explanation": "ok", "verdict": true}')]
    judge = from_spec(f"openai:j@{fake_openai.base_url}", options)
    assert judge.judge("rule", "q", "an answer").ok
    sent = fake_openai.requests[0]
    assert (sent["max_tokens"], sent["seed"], sent["min_p"], sent["temperature"]) == (77, 5, 0.2, 0.0)
    flat = tmp_path / "flat.json"
    flat.write_text('{"max_tokens": 9}')
    assert ChatOptions.from_file(flat, table="judge").given() == {}  # flat keys: the agent's
    with pytest.raises(AgentSpecError, match="report_role does not apply to the judge"):
        from_spec(f"openai:j@{fake_openai.base_url}", ChatOptions(report_role="user"))
    config.write_text('[judge]\nmax_tokens = "many"\n')
    with pytest.raises(ChatOptionsError, match="max_tokens must be an integer"):
        ChatOptions.from_file(config, table="judge")
