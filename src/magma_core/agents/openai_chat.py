"""An agent backed by any OpenAI-compatible chat-completions endpoint with tool calling.

Per candidate, one chat completion: a system prompt (robots and task attributes), the
conversation kept in ``memory["history"]`` (OpenAI chat messages), and the current instruction.
The engine's tools become function schemas (see :mod:`magma_core.agents.chat_prompt` for the
prompt styles). The reply becomes a decision: each tool call with its robot, the message text
as ``say``. Request parameters, timeouts and retries come from
:class:`~magma_core.agents.chat_options.ChatOptions`; ``tool_choice`` is ``auto`` whenever
tools are offered, and a warning goes out when an endpoint answers the first requests that
offer tools without a single tool call.

Robots: with one robot in ``attributes["known_robots"]`` every call targets it. With several,
every function gets a required ``robot`` argument (an enum of the robot names) that is removed
from the arguments and becomes ``target_robot_name``; if a tool already has a parameter named
``robot``, the added argument is called ``target_robot_name`` instead, for every tool.

Environment reports (instruction type ``env``) answer the previous turn's tool calls as
``tool`` messages (the first call's message carries the report, it covers the whole turn);
without pending calls they become a user message prefixed ``[environment]``.

Malformed replies (not a chat completion, bad JSON arguments, an unknown tool, no valid robot
where several exist) become error candidates whose message quotes the model's raw text. Their
memory keeps the instruction's messages (so the report on the last executed calls stays in the
conversation) but not the bad reply; only when the endpoint could not be reached (the input is
sent again) is the memory left unchanged. Each internal step records the exact ``request``
body, the raw reply (``output_raw``), ``usage`` (tokens of every attempt, summed),
``latency_s``, ``attempts`` and ``attempt_log`` (outcome, seconds and tokens of each attempt).

:meth:`OpenAIChatAgent.check` probes ``GET {base_url}/models`` once, so an unreachable
endpoint or a refused API key fails before a run starts (see its doc for what is accepted).
It waits :func:`check_timeout` of the agent's timeout: a busy local server (still generating
an earlier reply) answers late, so the wait grows with the timeout, within 10-60 s.
"""

from __future__ import annotations

import copy
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from magma_core.agents._http import FailedAttempt, clip
from magma_core.agents.backends import chat_client
from magma_core.agents.base import AgentCheckError, Candidate, CandidateAgent, robot_names
from magma_core.agents.chat_client import DEFAULT_BASE_URL, ChatError, summed_usage
from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.chat_prompt import (
    DEFAULT_SYSTEM_PROMPT,
    RAW_SYSTEM_PROMPT,
    json_schema_for,
    system_content,
    tool_schemas,
    turn_messages,
)
from magma_core.agents.image_parts import with_image_parts
from magma_core.agents.reply_parsing import (
    HISTORY_KEY,
    RAW_TEXT_IN_ERRORS,
    ROLES,
    ReplyError,
    parse_message,
    raw_text,
    read_history,
    say_text,
)
from magma_core.agents.stage_decoding import (
    CALL_ENDS,
    call_prefill_text,
    callable_tools,
    constrained_message,
    reply_schema,
    response_format,
    stage_of,
    tool_choice,
    tools_prompt,
)
from magma_core.protocol.agent import AgentDecision, AgentInfo, AgentInput

# ReplyError, parse_message, raw_text, read_history, HISTORY_KEY, ROLES and RAW_TEXT_IN_ERRORS
# live in magma_core.agents.reply_parsing; they stay importable from here.
__all__ = ["HISTORY_KEY", "RAW_TEXT_IN_ERRORS", "ROLES", "OpenAIChatAgent", "ReplyError", "json_schema_for",
           "parse_message", "raw_text", "read_history", "say_text", "tool_schemas", "turn_messages"]

#: the pre-check's wait (``GET /models``) is the agent's timeout, clamped to these bounds
CHECK_TIMEOUT_MIN_S, CHECK_TIMEOUT_MAX_S = 10.0, 60.0
#: Error codes after which the same input is sent again (the endpoint was not reached).
RESENT_CODES = frozenset({"timeout", "transport_error", "http_error", "cancelled"})
#: Replies to requests offering tools, none with a tool call, before the warning goes out.
NO_TOOL_CALL_WARNING_AFTER = 3


def _model_listed(model: str, listed: list[str]) -> bool:
    """Whether ``model`` is in ``listed``; ``name`` also matches ``name:latest`` (Ollama)."""
    return model in listed or f"{model}:latest" in listed or model.removesuffix(":latest") in listed


def check_timeout(agent_timeout_s: float) -> float:
    """Seconds the pre-check (``GET /models``) waits: the agent's per-attempt timeout, clamped
    to :data:`CHECK_TIMEOUT_MIN_S`-:data:`CHECK_TIMEOUT_MAX_S` (never so short that a busy
    server fails the check, never so long that a dead endpoint holds the run back)."""
    return min(CHECK_TIMEOUT_MAX_S, max(CHECK_TIMEOUT_MIN_S, float(agent_timeout_s)))


class OpenAIChatAgent(CandidateAgent):
    """An agent calling ``model`` at an OpenAI-compatible ``base_url`` (e.g.
    ``http://localhost:8000/v1``); the API key, if any, is read from ``api_key_env``.

    ``options`` (a :class:`ChatOptions`) set the request parameters, the timeout per attempt
    and the retries; the keyword arguments ``temperature``, ``max_tokens``, ``timeout``,
    ``retries`` and ``backoff`` are shorthands that win over them. ``temperature`` applies
    unless ``extra_keys["inference_mode"]`` is true (then 0); ``concurrency`` candidates are
    requested at a time; ``prompt_style`` is ``compact`` or ``raw`` (see
    :mod:`~magma_core.agents.chat_prompt`). ``on_notice`` receives one line whenever
    something worth showing happens while waiting (a failed attempt, a retry, an endpoint
    that ignores the tools); without it such lines go to stderr.
    """

    agent_id = "magma.openai_chat"
    component = "openai_chat"
    concurrent = True  # one thread-safe HTTP client; requests in flight are independent
    unreachable_codes = frozenset({"timeout", "transport_error"})  # retried by the caller

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        model: str = "gpt-4o-mini",
        *,
        options: ChatOptions | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        system_prompt: str | None = None,
        prompt_style: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float | None = None,
        concurrency: int = 4,
        record_prompt: bool = True,
        transport: Any = None,
        on_notice: Callable[[str], None] | None = None,
        backends: Sequence[tuple[str, str]] = (),
        routing: str = "failover",
    ) -> None:
        shorthand = ChatOptions(temperature=temperature, max_tokens=max_tokens, timeout=timeout,
                                retries=retries, backoff=backoff, prompt_style=prompt_style)
        self.options = shorthand.merged_over(options or ChatOptions())
        prompt_style = self.options.prompt_style or "compact"
        self.client = chat_client(base_url, model, backends, routing, api_key_env=api_key_env,
                                  timeout=self.options.timeout_s, retries=self.options.retry_count,
                                  backoff=self.options.backoff_s, transport=transport,
                                  on_failed_attempt=self._failed_attempt)
        self.model = model
        self.prompt_style = prompt_style
        if system_prompt is None:
            system_prompt = DEFAULT_SYSTEM_PROMPT if prompt_style == "compact" else RAW_SYSTEM_PROMPT
        self.system_prompt = system_prompt
        self.concurrency = concurrency
        self.record_prompt = record_prompt
        self.on_notice = on_notice
        self.check_warning: str | None = None
        self._lock = threading.Lock()
        self._offered = 0  # replies to requests that offered tools
        self._called = 0  # of those, replies with at least one tool call
        self._warned = False
        self._required_ok = True  # whether the server takes tool_choice "required"

    @property
    def temperature(self) -> float | None:
        return self.options.temperature

    @property
    def max_tokens(self) -> int | None:
        return self.options.max_tokens

    def check(self, timeout: float | None = None) -> AgentInfo:
        """Probe ``GET {base_url}/models`` once (no retries, at most ``timeout`` seconds;
        default :func:`check_timeout` of the agent's timeout).

        Raise :class:`AgentCheckError` when the endpoint is unreachable (connection error,
        timeout) or refuses the API key (HTTP 401/403). Anything else is accepted: servers
        without ``/models`` (404, 405, a body that is no model list), and a model list that
        does not name ``model`` (servers alias names); the latter, and any other HTTP status,
        leave a note in :attr:`check_warning` (None when all is well).
        """
        client = self.client
        self.check_warning = None
        try:
            listing = client.list_models(check_timeout(self.options.timeout_s) if timeout is None else timeout)
        except ChatError as exc:
            raise AgentCheckError(f"the model server at {client.base_url} is unreachable: {exc.message}") from None
        where = f"the model server at {client.base_url}"
        if listing.status in (401, 403):
            env = client.api_key_env
            if client.has_api_key:
                advice = f"the API key in ${env} was refused"
            elif env:
                advice = f"no API key was sent: ${env} is not set"
            else:
                advice = "no API key was sent (no api_key_env is configured)"
            raise AgentCheckError(
                f"{where} answered HTTP {listing.status} to GET /models: {advice} ({clip(listing.raw, 200)})"
            )
        if listing.status in (404, 405):
            return self.info()
        if listing.status != 200:
            self.check_warning = f"{where} answered HTTP {listing.status} to GET /models: {clip(listing.raw, 200)}"
        elif listing.models is not None and not _model_listed(self.model, listing.models):
            shown = ", ".join(listing.models[:10]) + (", ..." if len(listing.models) > 10 else "")
            self.check_warning = (
                f"model {self.model!r} is not among the models {where} lists ({shown or 'none'}); "
                "continuing, as servers may alias names"
            )
        return self.info()

    def system_message(self, agent_input: AgentInput, robots: list[str], robot_param: str | None) -> dict[str, Any]:
        """The system message: the prompt, the robots, the task attributes."""
        content = system_content(self.system_prompt, self.prompt_style, robots, robot_param, agent_input.attributes)
        return {"role": "system", "content": content}

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        memory = agent_input.memory
        try:
            history = read_history(memory)
        except ValueError as exc:
            return self._fail("invalid_memory", str(exc), memory, [])
        robots = robot_names(agent_input.attributes)
        attributes = agent_input.attributes if self.prompt_style == "compact" else None
        stage = stage_of(agent_input.extra_keys) if self.options.stage_aware_on else None
        tools = callable_tools(agent_input.tools, stage)
        schemas, names, robot_param = tool_schemas(tools, robots, attributes)
        constrained = (self.options.constrain or "off") != "off" and bool(schemas)
        may_answer = stage is None or stage["kind"] == "text_only"
        instruction = agent_input.instruction
        turn = turn_messages(history, instruction.type, instruction.content, self.prompt_style,
                             self.options.report_role or "tool")
        system = self.system_message(agent_input, robots, robot_param)
        if constrained:
            system["content"] += "\n" + tools_prompt(schemas, may_answer)
        try:
            messages = self.prompt_messages(system, history,
                                            with_image_parts(turn, agent_input.extra_keys),
                                            agent_input, schemas)
        except ReplyError as exc:  # a prompt template that cannot render this input
            return self._fail(exc.code, exc.message, memory, [])
        step: dict[str, Any] = {
            "id": f"{request_id}:{agent_input.id}:{candidate_index}",
            "component": self.component,
            "origin": "model",
            "input_elements": {"model": self.model, "tools": sorted(names.values())},
        }
        if stage is not None:
            step["input_elements"]["stage"] = stage["kind"]
        with_turn = copy.deepcopy(memory)
        with_turn[HISTORY_KEY] = [*copy.deepcopy(history), *turn]
        params = self._params(agent_input, schemas, stage, constrained, may_answer, len(robots))
        prefill = None if constrained else call_prefill_text(self.options.call_prefill, stage, schemas)
        if prefill is not None:  # the server continues the call marker under its tool grammar
            messages = [*messages, {"role": "assistant", "content": prefill}]
            params.update(continue_final_message=True, add_generation_prompt=False)
            params.setdefault("parallel_tool_calls", len(robots) > 1)
            end = CALL_ENDS.get(self.options.call_prefill or "")
            if len(robots) <= 1 and end and "stop" not in params:  # one robot: one call, then stop
                params["stop"] = [end]
            if self.options.tool_choice is None:
                params["tool_choice"] = "required"
        try:
            reply = self._complete(messages, params)
        except ChatError as exc:
            self._record(step, exc.request, exc.raw, summed_usage(exc.attempt_log), exc.latency_s, exc.attempts, exc.attempt_log)
            kept = memory if exc.code in RESENT_CODES else with_turn
            message = exc.message
            if exc.code == "invalid_reply":
                message += f". The reply was: {clip(exc.raw, RAW_TEXT_IN_ERRORS)}"
            return self._fail(exc.code, message, kept, [step])
        self._record(step, reply.request, reply.raw, reply.usage, reply.latency_s, reply.attempts, reply.attempt_log)
        step["finish_reason"] = reply.finish_reason
        if reply.attempt_log and "streamed_tokens" in reply.attempt_log[-1]:
            step["streamed_tokens"] = reply.attempt_log[-1]["streamed_tokens"]
        reply_message = constrained_message(reply.message.get("content")) if constrained else reply.message
        self._count_tool_use(bool(schemas), reply_message or {})
        try:
            if reply_message is None:
                raise ReplyError("invalid_reply", "the reply is not the JSON object its schema asks for")
            decision, assistant = self.parse_reply(reply_message, names, robots, robot_param)
        except ReplyError as exc:
            message = f"{exc.message}. Your reply was: {clip(raw_text(reply.message), RAW_TEXT_IN_ERRORS)}"
            if reply.finish_reason == "length":
                message += f" (cut at max_tokens={self.options.body_params(False).get('max_tokens')})"
            return self._fail(exc.code, message, with_turn, [step])
        with_turn[HISTORY_KEY].append(assistant)
        return Candidate(memory=with_turn, decision=decision, internal_steps=[step])

    # -- hooks of the output formats (magma_core.agents.output_formats) ------------------------
    def prompt_messages(self, system: dict[str, Any], history: list[dict[str, Any]], turn: list[dict[str, Any]],
                        agent_input: AgentInput, schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages sent: the system message, the conversation so far, this turn."""
        return [system, *history, *turn]

    def parse_reply(self, message: dict[str, Any], names: dict[str, str], robots: list[str],
                    robot_param: str | None) -> tuple[AgentDecision, dict[str, Any]]:
        """``(decision, assistant message for the history)`` from the reply (native tool calls)."""
        return parse_message(message, names, robots, robot_param)

    def _record(self, step: dict[str, Any], request: dict[str, Any], raw: str, usage: dict[str, int],
                latency_s: float, attempts: int, attempt_log: list[dict[str, Any]]) -> None:
        if self.record_prompt:
            step["request"] = request
        step.update(output_raw=clip(raw, 200_000), usage=usage, latency_s=latency_s, attempts=attempts,
                    attempt_log=[{k: v for k, v in e.items() if k != "body"} for e in attempt_log])

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        """One completion; a server that refuses ``tool_choice: required`` is asked again
        with ``auto`` (and is never asked for ``required`` again)."""
        cap = self.options.max_tokens_cap if self.options.stream else None
        try:
            return self.client.complete(messages, stream_cap=cap, **params)
        except ChatError as exc:
            if params.get("tool_choice") != "required" or exc.code != "http_error":
                raise
            self._required_ok = False
            self.notice(f"{self.client.base_url} refused tool_choice 'required' ({clip(exc.message, 120)}); "
                        "asking with 'auto' from now on")
            return self.client.complete(messages, stream_cap=cap, **{**params, "tool_choice": "auto"})

    def _params(self, agent_input: AgentInput, schemas: list[dict[str, Any]], stage: dict[str, Any] | None = None,
                constrained: bool = False, may_answer: bool = True, robots: int = 1) -> dict[str, Any]:
        if constrained:
            params = {"response_format": response_format(
                self.options.constrain or "json_object", reply_schema(schemas, robots, may_answer))}
            params.update(self.options.body_params(False))
        else:
            params = {"tools": schemas} if schemas else {}
            params.update(self.options.body_params(bool(schemas)))
            if stage is not None and self.options.tool_choice is None and schemas:
                params["tool_choice"] = tool_choice(stage, schemas, self._required_ok)
        if agent_input.extra_keys.get("inference_mode") is True:
            params["temperature"] = 0.0
        return params

    # -- what is shown while waiting ---------------------------------------------------------
    def notice(self, line: str) -> None:
        """Show one line (to ``on_notice``, else stderr)."""
        if self.on_notice is not None:
            self.on_notice(line)
        else:
            print(f"magma: {line}", file=sys.stderr, flush=True)

    def _failed_attempt(self, failed: FailedAttempt) -> None:
        if self.client.cancelled:
            return
        then = f"retrying in {failed.retry_in_s:g} s" if failed.retry_in_s is not None else "giving up"
        self.notice(f"model call attempt {failed.attempt}/{failed.of} failed after {failed.latency_s:.1f} s "
                    f"({clip(failed.reason, 200)}); {then}")

    def _count_tool_use(self, offered: bool, message: dict[str, Any]) -> None:
        if not offered:
            return
        with self._lock:
            self._offered += 1
            self._called += bool(message.get("tool_calls"))
            warn = not self._warned and self._called == 0 and self._offered >= NO_TOOL_CALL_WARNING_AFTER
            self._warned = self._warned or warn
        if warn:
            self.notice(no_tool_call_warning(self._offered, self.client.base_url, self.options))

    def _fail(self, code: str, message: str, memory: dict[str, Any], steps: list[dict[str, Any]]) -> Candidate:
        return Candidate.fail(code, message, copy.deepcopy(memory), steps, self.component)

    def cancel(self) -> None:
        """Stop the model requests in flight (their candidates fail with ``cancelled``)."""
        self.client.cancel()

    def close(self) -> None:
        self.client.close()


def no_tool_call_warning(replies: int, base_url: str, options: ChatOptions) -> str:
    """The warning for an endpoint whose replies to requests offering tools made no tool
    call, naming the likely cause for the options in use."""
    head = f"warning: {replies} replies from {base_url} to requests offering tools made no tool call: "
    if options.tool_choice in ("omit", "none"):
        return head + f"tool_choice {options.tool_choice!r} lets the server ignore the tools; see --tool-choice"
    return head + ("tool_choice was sent, so the server's chat format may not render the tools (e.g. "
                   "llama-cpp-python needs --chat_format chatml-function-calling) or the model does not "
                   "call tools; --constrain json_object (llama-cpp-python) or json_schema asks for calls "
                   "by a JSON schema instead")
