"""A client for any agent server speaking protocol 2.0 over HTTP.

:meth:`HttpAgent.check` reads ``/health`` and ``/v1/info`` and refuses an agent whose protocol
version is not 2.0. :meth:`HttpAgent.respond` posts ``/v1/responses`` and checks the reply
against the request. Nothing the agent sends can crash the caller: transport errors and
timeouts are retried with backoff and then, like any malformed reply, become ``error``
candidates (with the raw reply kept in ``internal_steps``).

Salvage rule: when the reply is a list of the right length, each item that is a valid output
at the right position is kept; every other candidate becomes an error. A reply of the wrong
length makes every candidate an error.

Every output also gets an internal step ``{"component": "http_agent", "request_latency_s",
"attempts"}``: the round trip of the whole batch, shared by its candidates.
"""

from __future__ import annotations

import json
import time
from typing import NoReturn

import httpx
from pydantic import ValidationError

from magma_core.agents._http import TransportFailure, clip, request_with_retries
from magma_core.agents.base import (
    Agent,
    AgentCheckError,
    Answer,
    NoAnswer,
    ProtocolVersionError,
    error_output,
    outputs_by_input,
)
from magma_core.json_types import JSONDict, JSONValue
from magma_core.protocol.agent import (
    PROTOCOL_VERSION,
    AgentHealth,
    AgentInfo,
    AgentOutput,
    AgentRequest,
    AgentResponse,
)

COMPONENT = "http_agent"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return clip(str(exc), 300)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return clip(f"{where}: {first.get('msg', '')}{more}", 500)


class HttpAgent(Agent):
    """Talks to the agent server at ``url`` (e.g. ``http://127.0.0.1:8888``).

    ``timeout`` bounds each attempt (seconds, for the whole reply); ``retries`` more attempts
    follow a transport error, a timeout, HTTP 429 or 5xx, after ``backoff``, ``2*backoff``, ...
    seconds. Replies larger than ``max_response_bytes`` are refused.
    """

    agent_id = "magma.http"
    concurrent = True  # one thread-safe httpx client; requests in flight are independent

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 300.0,
        retries: int = 2,
        backoff: float = 1.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_response_bytes = max_response_bytes
        self._client = httpx.Client(headers=headers, transport=transport, timeout=timeout)
        self._info: AgentInfo | None = None

    # -- handshake -------------------------------------------------------------------------

    def _get(self, path: str, timeout: float) -> JSONValue:
        try:
            reply = request_with_retries(
                self._client, "GET", f"{self.url}{path}", timeout=timeout, retries=0,
                backoff=0.0, max_bytes=1024 * 1024,
            )
        except TransportFailure as exc:
            raise AgentCheckError(f"agent at {self.url} is unreachable: {exc.message}") from None
        if reply.status != 200:
            raise AgentCheckError(f"agent at {self.url}: GET {path} answered HTTP {reply.status}: {clip(reply.text, 200)}")
        try:
            return json.loads(reply.text)
        except (ValueError, RecursionError):
            raise AgentCheckError(f"agent at {self.url}: GET {path} did not answer JSON: {clip(reply.text, 200)}") from None

    def check(self, wait_s: float = 0.0) -> AgentInfo:
        """Check ``/health`` (polling up to ``wait_s`` seconds while the agent is not ready)
        and ``/v1/info``; return the agent's info or raise :class:`AgentCheckError`
        (:class:`ProtocolVersionError` for another protocol version)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                AgentHealth.model_validate(self._get("/health", min(self.timeout, 30.0)))
                break
            except (AgentCheckError, ValidationError) as exc:
                if time.monotonic() >= deadline:
                    if isinstance(exc, ValidationError):
                        raise AgentCheckError(f"agent at {self.url} is not ready: /health says {_first_error(exc)}") from None
                    raise
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
        data = self._get("/v1/info", min(self.timeout, 30.0))
        version = data.get("protocol_version") if isinstance(data, dict) else None
        if version != PROTOCOL_VERSION:
            raise ProtocolVersionError(
                f"agent at {self.url} speaks protocol {version!r}; MAGMA needs protocol "
                f"{PROTOCOL_VERSION!r} (/health, /v1/info, /v1/responses)"
            )
        try:
            self._info = AgentInfo.model_validate(data)
        except ValidationError as exc:
            raise AgentCheckError(f"agent at {self.url}: invalid /v1/info: {_first_error(exc)}") from None
        return self._info

    def info(self) -> AgentInfo:
        """The remote agent's ``/v1/info`` (fetched once)."""
        return self._info or self.check()

    # -- responses -------------------------------------------------------------------------

    def respond(self, request: AgentRequest) -> AgentResponse:
        """Post ``request``; always returns a response that answers it exactly."""
        try:
            return self._respond(request)
        except Exception as exc:  # last line of defence: a bad agent never crashes a run
            return self._all_errors(request, "client_error", f"{type(exc).__name__}: {clip(str(exc), 300)}")

    def answer(self, request: AgentRequest) -> dict[int, Answer]:
        """Like :meth:`respond` with one attempt, but an unreachable agent (not ready, transport
        error, timeout, HTTP 429 or 5xx) gives :class:`NoAnswer` for every input: the caller
        retries with its own backoff, per input."""
        try:
            return outputs_by_input(self._respond(request, retries=0, unreachable=True))
        except _Unreachable as exc:
            return {agent_input.id: NoAnswer(exc.code, exc.message) for agent_input in request.inputs}
        except Exception as exc:  # last line of defence, as in respond
            return outputs_by_input(self._all_errors(
                request, "client_error", f"{type(exc).__name__}: {clip(str(exc), 300)}"))

    def _respond(self, request: AgentRequest, retries: int | None = None,
                 unreachable: bool = False) -> AgentResponse:
        if self._info is None:
            try:
                self.check()
            except AgentCheckError as exc:
                if unreachable:
                    raise _Unreachable("agent_unavailable", str(exc)) from None
                return self._all_errors(request, "agent_unavailable", str(exc))
        try:
            reply = request_with_retries(
                self._client, "POST", f"{self.url}/v1/responses",
                json_body=request.model_dump(mode="json"), timeout=self.timeout,
                retries=self.retries if retries is None else retries, backoff=self.backoff,
                max_bytes=self.max_response_bytes,
            )
        except TransportFailure as exc:
            if unreachable and exc.code != "response_too_large":
                raise _Unreachable(exc.code, f"POST /v1/responses: {exc.message}") from None
            return self._all_errors(request, exc.code, f"POST /v1/responses: {exc.message}",
                                    latency_s=exc.latency_s, attempts=exc.attempts)
        stats = {"component": COMPONENT, "request_latency_s": reply.latency_s, "attempts": reply.attempts}
        if unreachable and (reply.status == 429 or reply.status >= 500):
            raise _Unreachable("http_error", f"POST /v1/responses answered HTTP {reply.status}")
        if reply.status != 200:
            return self._all_errors(
                request, "http_error", f"POST /v1/responses answered HTTP {reply.status}: {clip(reply.text, 300)}",
                raw=reply.text, latency_s=reply.latency_s, attempts=reply.attempts,
            )
        try:
            data = json.loads(reply.text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            return self._all_errors(request, "invalid_response", f"the reply is not JSON: {clip(str(exc), 200)}",
                                    raw=reply.text, latency_s=reply.latency_s, attempts=reply.attempts)
        try:
            response = AgentResponse.model_validate(data).validate_request(request)
        except (ValueError, RecursionError) as exc:  # pydantic's ValidationError is a ValueError
            return self._salvage(request, data, exc, reply.text, stats)
        for output in response:
            output.internal_steps.append(dict(stats))
        return response

    def _salvage(self, request: AgentRequest, data: JSONValue, exc: Exception, raw: str, stats: JSONDict) -> AgentResponse:
        why = _first_error(exc) if isinstance(exc, ValidationError) else clip(str(exc), 500)
        expected = request.expected_keys()
        slots = [(agent_input, k) for agent_input in request.inputs for k in range(agent_input.num_outputs)]
        if not isinstance(data, list) or len(data) != len(expected):
            got = f"{len(data)} outputs" if isinstance(data, list) else f"a {type(data).__name__}"
            return self._all_errors(request, "invalid_response",
                                    f"the reply does not answer the request: got {got}, expected a list of {len(expected)} outputs ({why})",
                                    raw=raw, latency_s=stats["request_latency_s"], attempts=stats["attempts"])
        outputs: list[AgentOutput] = []
        for position, (item, key, (agent_input, k)) in enumerate(zip(data, expected, slots, strict=True)):
            try:
                output = AgentOutput.model_validate(item)
                if output.key != key:
                    raise ValueError(f"output {position} answers {output.key}, expected {key}")
            except (ValueError, RecursionError) as item_exc:
                detail = _first_error(item_exc) if isinstance(item_exc, ValidationError) else clip(str(item_exc), 300)
                outputs.append(error_output(
                    request.request_id, agent_input, k, "invalid_response",
                    f"output {position} is invalid: {detail}", COMPONENT,
                    [{**stats, "output_raw": clip(_dump(item))}],
                ))
                continue
            output.internal_steps.append(dict(stats))
            outputs.append(output)
        return AgentResponse(outputs)

    def _all_errors(self, request: AgentRequest, code: str, message: str, raw: str = "",
                    latency_s: float = 0.0, attempts: int = 0) -> AgentResponse:
        step: JSONDict = {"component": COMPONENT, "request_latency_s": latency_s, "attempts": attempts}
        if raw:
            step["output_raw"] = clip(raw)
        return AgentResponse([
            error_output(request.request_id, agent_input, k, code, message, COMPONENT, [dict(step)])
            for agent_input in request.inputs
            for k in range(agent_input.num_outputs)
        ])

    def close(self) -> None:
        self._client.close()


class _Unreachable(Exception):
    """No answer arrived (raised only on the :meth:`HttpAgent.answer` path)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = clip(message, 500)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _dump(item: object) -> str:
    try:
        return json.dumps(item)
    except (TypeError, ValueError):
        return repr(item)
