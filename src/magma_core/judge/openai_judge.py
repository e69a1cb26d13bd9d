"""A judge backed by an OpenAI-compatible chat-completions model, answering in JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from magma_core.agents._http import clip
from magma_core.agents.backends import chat_client
from magma_core.agents.chat_client import ChatError
from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.spec import AgentSpecError, parse_spec
from magma_core.json_types import JSONDict
from magma_core.judge.base import EMPTY_ANSWER_REASON, AcceptAllJudge, Judge, Verdict
from magma_core.text_safety import safe_text

if TYPE_CHECKING:  # named for the annotations only
    import httpx

SYSTEM_PROMPT = (
    "You judge the answers a robot assistant gives to its user. Decide whether the answer "
    "satisfies the rule; be lenient about wording, strict about meaning. Reply with only a JSON "
    'object: {"explanation": "<one or two sentences>", "verdict": true or false}.'
)
INVALID_REASON = "The text-only answer could not be validated because the judge returned an invalid response: {}"
#: The model options a judge takes (see :func:`from_spec`).
JUDGE_OPTIONS = ("max_tokens", "timeout", "retries", "backoff", "seed", "extra_body")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def parse_verdict(text: str) -> tuple[bool, str]:
    """``(verdict, explanation)`` from a reply holding one JSON object (code fences and text
    around it are tolerated); raise ``ValueError`` with the reason otherwise."""
    body = _THINK.sub("", text)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    data = json.loads(body[start : end + 1])
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    verdict = data.get("verdict")
    if isinstance(verdict, str) and verdict.strip().lower() in ("true", "false"):
        verdict = verdict.strip().lower() == "true"
    if not isinstance(verdict, bool):
        raise ValueError("'verdict' must be true or false")
    explanation = data.get("explanation", "")
    return verdict, explanation if isinstance(explanation, str) else json.dumps(explanation)


class OpenAIJudge:
    """Asks ``model`` at ``base_url`` for a JSON verdict; an unparsable reply is retried (up to
    ``max_attempts`` in all, the model being told what was wrong), then the verdict fails with
    the reason and ``unparsable`` set (a judge error on that episode; the run goes on). Transport errors are retried by the client first (``retries``, ``backoff``)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_attempts: int = 3,
        max_tokens: int = 2000,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 0.5,
        extra_body: JSONDict | None = None,
        transport: httpx.BaseTransport | None = None,
        backends: Sequence[tuple[str, str]] = (),
        routing: str = "failover",
    ) -> None:
        self.extra_body = dict(extra_body or {})
        self.client = chat_client(base_url, model, backends, routing, api_key_env=api_key_env,
                                  timeout=timeout, retries=retries, backoff=backoff, transport=transport)
        self.max_attempts = max(1, max_attempts)
        self.max_tokens = max_tokens

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        """Judge ``answer`` (to ``question``) against ``rule``; never raises for a bad reply."""
        if not answer.strip():
            return Verdict(ok=False, reason=EMPTY_ANSWER_REASON)
        messages: list[JSONDict] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": safe_text(f"Rule: {rule}\nQuestion: {question}\nAnswer: {answer}")},
        ]
        usage: dict[str, int] = {}
        latency, raw, problem, answered = 0.0, "", "no attempt made", False
        for attempt in range(1, self.max_attempts + 1):
            try:
                reply = self.client.complete(messages, **{"temperature": 0.0, "max_tokens": self.max_tokens,
                                                          **self.extra_body})
            except ChatError as exc:
                latency += exc.latency_s
                raw, problem, answered = str(exc.raw or ""), f"{exc.code}: {exc.message}", False
                continue
            latency += reply.latency_s
            for key, value in reply.usage.items():
                usage[key] = usage.get(key, 0) + value
            content = reply.message.get("content")
            raw = content if isinstance(content, str) else (
                reply.raw if isinstance(reply.raw, str) else json.dumps(reply.raw, default=str))
            answered = True
            try:
                passed, explanation = parse_verdict(raw)
            except (ValueError, TypeError, RecursionError) as exc:
                problem = str(exc) or type(exc).__name__
                messages += [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": f"That reply is invalid ({problem}). Reply with only the JSON object."},
                ]
                continue
            return Verdict(ok=passed, reason=explanation, raw_output=clip(raw), attempts=attempt,
                           usage=usage, latency_s=latency)
        # the judge answered on its last attempt, yet no verdict: this item's judge error
        return Verdict(ok=False, reason=INVALID_REASON.format(problem), raw_output=clip(raw),
                       error=problem, attempts=self.max_attempts, usage=usage, latency_s=latency,
                       unparsable=answered)

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()


def from_spec(text: str, chat_options: ChatOptions | None = None, **options: object) -> Judge:
    """``none`` -> :class:`AcceptAllJudge`; ``openai:MODEL[@BASE_URL]`` -> :class:`OpenAIJudge`.

    ``chat_options`` (the ``[judge]`` table of an ``--agent-config`` file) set the judge's
    ``max_tokens``, ``timeout``, ``retries``, ``backoff``, ``seed`` and ``extra_body``, as
    they do an agent's; ``options`` go to the constructor and win over them."""
    if text.strip() == "none":
        return AcceptAllJudge()
    spec = parse_spec(text)
    if spec.kind != "openai":
        raise AgentSpecError(f"unknown judge spec {text!r}: use 'none' or 'openai:MODEL[@BASE_URL]'")
    given = chat_options.given() if chat_options is not None else {}
    refused = sorted(set(given) - set(JUDGE_OPTIONS))
    if refused:
        raise AgentSpecError(f"judge option {', '.join(refused)} does not apply to the judge "
                             f"(it takes {', '.join(JUDGE_OPTIONS)})")
    taken = {k: v for k, v in given.items() if k in ("max_tokens", "timeout", "retries", "backoff")}
    extra = {k: given[k] for k in ("seed",) if k in given} | dict(given.get("extra_body", {}))
    if spec.backends:
        options = {"backends": spec.backends, "routing": spec.routing, **options}
    return OpenAIJudge(spec.base_url, spec.model, **{**taken, "extra_body": extra, **options})
