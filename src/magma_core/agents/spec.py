"""Agent spec strings, as given to ``magma run --agent`` and ``magma serve-agent --agent``.

- ``trace``: the trace agent (it needs the task's perfect trace);
- ``noisy-trace`` or ``noisy-trace:P``: the trace with a mistake per decision with
  probability P (default 0.3), for generation without a model;
- ``openai:MODEL`` or ``openai:MODEL@BASE_URL``: an OpenAI-compatible endpoint (the base URL
  defaults to ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``); the model name may
  contain ``:`` (``openai:qwen2.5:7b@http://localhost:11434/v1``);
- ``http://HOST:PORT`` or ``https://...``: an agent server speaking protocol 2.0;
- several ``openai:`` specs, comma-separated, with ``failover`` (default) or ``round-robin``
  among them: one role served by several backends (:mod:`magma_core.agents.backends`).

:func:`build_agent` is the one place a spec becomes a checked agent: ``magma run``, its
worker processes, ``magma serve-agent`` and Python callers of ``magma_core.runs.run`` use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from magma_core.agents.backends import split_backends
from magma_core.agents.base import Agent, AgentCheckError
from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.http import HttpAgent
from magma_core.agents.model_identity import probe
from magma_core.agents.noisy_trace import DEFAULT_NOISE, NoisyTraceAgent
from magma_core.agents.openai_chat import OpenAIChatAgent
from magma_core.agents.trace import TraceAgent
from magma_core.json_types import JSONDict
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks.perfect_trace import PerfectTrace

SPEC_FORMS = "'trace', 'noisy-trace[:P]', 'openai:MODEL[@BASE_URL]' or 'http://HOST:PORT'"


class AgentSpecError(UserError, ValueError):
    """An agent spec string that cannot be understood (one-line message)."""


@dataclass(frozen=True)
class AgentSpec:
    """A parsed spec: ``kind`` plus the fields that kind uses."""

    kind: Literal["trace", "noisy-trace", "openai", "http"]
    model: str = ""
    base_url: str = ""
    url: str = ""
    noise: float = 0.0
    backends: tuple[tuple[str, str], ...] = ()  # (base_url, model) of each, several backends only
    routing: str = "failover"


def parse_spec(text: str) -> AgentSpec:
    """Parse an agent spec string; raise :class:`AgentSpecError` if it is not one."""
    spec = (text or "").strip()
    several = split_backends(spec)
    if several is not None:  # one role, several endpoints (magma_core.agents.backends)
        parts = [parse_spec(item) for item in several[0]]
        return AgentSpec("openai", model=parts[0].model, base_url=parts[0].base_url,
                         backends=tuple((p.base_url, p.model) for p in parts), routing=several[1])
    if spec == "trace":
        return AgentSpec("trace")
    if spec == "noisy-trace" or spec.startswith("noisy-trace:"):
        return AgentSpec("noisy-trace", noise=_noise(spec, text))
    if spec.startswith(("http://", "https://")):
        if len(spec.split("://", 1)[1].strip("/")) == 0:
            raise AgentSpecError(f"agent spec {text!r} has no host")
        return AgentSpec("http", url=spec.rstrip("/"))
    if spec.startswith("openai:"):
        rest = spec[len("openai:"):]
        model, sep, base_url = rest.rpartition("@")
        if not sep or not base_url.startswith(("http://", "https://")):
            model, base_url = rest, ""
        if not model:
            raise AgentSpecError(f"agent spec {text!r} names no model: use 'openai:MODEL[@BASE_URL]'")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL", "") or "https://api.openai.com/v1"
        return AgentSpec("openai", model=model, base_url=base_url.rstrip("/"))
    raise AgentSpecError(f"unknown agent spec {text!r}: use {SPEC_FORMS}")


def _noise(spec: str, text: str) -> float:
    _, sep, value = spec.partition(":")
    if not sep:
        return DEFAULT_NOISE
    try:
        noise = float(value)
    except ValueError:
        noise = -1.0
    if not 0 <= noise <= 1:
        raise AgentSpecError(f"agent spec {text!r}: P must be a probability in [0, 1]")
    return noise


HTTP_AGENT_OPTIONS = ("timeout", "retries", "backoff")


def model_facts(text: str | None, options: JSONDict | None = None) -> JSONDict | None:
    """What a run records of the model behind an agent or judge spec: ``{"name", "endpoint",
    "options"}`` for ``openai:MODEL[@BASE_URL]`` (options: the given model options), ``{"endpoint"}``
    for an agent server, None for the built-in agents (and for a spec that is not one)."""
    if not text or text.strip() == "none":
        return None
    try:
        spec = parse_spec(text)
    except AgentSpecError:
        return None
    if spec.kind == "openai":
        facts = {"name": spec.model, "endpoint": spec.base_url, "options": dict(options or {})}
        if spec.backends:
            facts.update(backends=[f"{model}@{url}" for url, model in spec.backends], routing=spec.routing)
        return facts
    if spec.kind == "http":
        return {"endpoint": spec.url}
    return None


def model_identity(text: str | None) -> JSONDict | None:
    """The identity of the model behind an ``openai:MODEL[@BASE_URL]`` spec, as its server
    reports it (:func:`magma_core.agents.model_identity.probe`: engine, version, weights
    digest); None for any other spec."""
    if not text or text.strip() == "none":
        return None
    try:
        spec = parse_spec(text)
    except AgentSpecError:
        return None
    if spec.kind != "openai":
        return None
    return probe(spec.base_url, spec.model)


def from_spec(text: str, *, trace: PerfectTrace | None = None, chat_options: ChatOptions | None = None, **options: object) -> Agent:
    """Build the agent a spec string names. ``trace`` (a ``PerfectTrace``) is required for
    ``trace``; ``options`` go to the agent's constructor (e.g. ``timeout``, ``retries``).
    ``chat_options`` (:class:`ChatOptions`) configure an ``openai`` agent; an ``http`` agent
    takes their timeout, retries and backoff; any given for another kind is an error."""
    spec = parse_spec(text)
    given = chat_options.given() if chat_options is not None else {}
    allowed = {"openai": given.keys(), "http": HTTP_AGENT_OPTIONS}.get(spec.kind, ())
    refused = sorted(set(given) - set(allowed))
    if refused:
        raise AgentSpecError(
            f"agent option {', '.join(refused)} does not apply to a {spec.kind} agent "
            "(model options apply to openai:MODEL agents)"
        )
    if spec.kind == "http":
        options = {**{k: v for k, v in given.items() if k in HTTP_AGENT_OPTIONS}, **options}
    if spec.kind in ("trace", "noisy-trace"):
        if trace is None:
            raise AgentSpecError(f"the {spec.kind} agent needs a task's perfect trace")
        if spec.kind == "noisy-trace":
            return NoisyTraceAgent(trace, spec.noise, **options)
        return TraceAgent(trace, **options)
    if spec.kind == "openai":
        if spec.backends:
            options = {"backends": spec.backends, "routing": spec.routing, **options}
        return chat_agent_class(chat_options)(spec.base_url, spec.model, options=chat_options, **options)
    return HttpAgent(spec.url, **options)


def chat_agent_class(options: ChatOptions | None) -> type[OpenAIChatAgent]:
    """The ``openai:`` agent class its options ask for: summarising
    (:mod:`~magma_core.agents.summarising`), with an output format or prompt template
    (:mod:`~magma_core.agents.output_formats`), or the plain tool-calling agent."""
    if options is not None and options.summarise_after:
        from magma_core.agents.summarising import SummarisingChatAgent

        return SummarisingChatAgent
    if options is not None and (options.output_format == "json" or options.prompt_template):
        from magma_core.agents.output_formats import FormattedChatAgent

        return FormattedChatAgent
    return OpenAIChatAgent


def build_agent(text: str, *, trace: PerfectTrace | None = None, check: bool = True, **options: object) -> Agent:
    """The agent ``text`` names, ready to use: built by :func:`from_spec`, then (``http`` and
    ``openai`` agents, unless ``check`` is False) checked with ``agent.check()``.

    Every failure is a one-line :class:`UserError` (an unusable agent is closed first). A
    warning from the check stays on ``agent.check_warning`` for the caller to show.
    """
    spec = parse_spec(text)
    agent = from_spec(text, trace=trace, **options)
    if check and spec.kind != "trace":
        try:
            agent.check()
        except AgentCheckError as exc:
            agent.close()
            where = f"agent at {spec.url}" if spec.kind == "http" else f"agent {text.strip()}"
            raise UserError(f"{where} is not usable: {exc}") from None
    return agent
