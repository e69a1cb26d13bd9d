"""A minimal client for OpenAI-compatible ``POST {base_url}/chat/completions`` endpoints.

Works with OpenAI, vLLM, Ollama, llama.cpp server and the like. It only moves JSON: building
prompts and reading decisions is the caller's job. Every call reports the token usage (the
reply's ``usage`` field), its latency and a log of its attempts (outcome, seconds and tokens
of each); the exact request body travels with the reply or the error. :meth:`ChatClient.cancel`
stops the requests in flight. :meth:`ChatClient.list_models` probes ``GET {base_url}/models``
once, to check an endpoint before using it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from magma_core.agents._cancel import SocketTracker, cancellable_transport
from magma_core.agents._http import FailedAttempt, TransportFailure, clip, request_with_retries
from magma_core.json_types import JSONDict, JSONValue

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_REPLY_BYTES = 16 * 1024 * 1024


@dataclass
class ChatReply:
    """A parsed chat-completions reply: its first choice's ``message`` and call statistics."""

    message: JSONDict
    raw: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
    attempt_log: list[JSONDict] = field(default_factory=list)
    request: JSONDict = field(default_factory=dict)


@dataclass
class ModelList:
    """What ``GET {base_url}/models`` answered: the HTTP ``status``, the model ids when the
    body is an OpenAI model list (``{"data": [{"id": ...}, ...]}``, else None) and the body."""

    status: int
    models: list[str] | None
    raw: str


def _model_ids(text: str) -> list[str] | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [e.get("id") for e in entries if isinstance(e, dict)]
    if len(ids) != len(entries) or not all(isinstance(i, str) for i in ids):
        return None
    return ids


class ChatError(Exception):
    """The endpoint gave no usable reply. ``code``: ``timeout``, ``transport_error``,
    ``response_too_large``, ``cancelled``, ``http_error`` or ``invalid_reply``; ``raw`` is the
    body, if any; ``attempt_log`` and ``request`` as in :class:`ChatReply`."""

    def __init__(self, code: str, message: str, raw: str = "", latency_s: float = 0.0, attempts: int = 1,
                 attempt_log: list[JSONDict] | None = None, request: JSONDict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.raw = raw
        self.latency_s = latency_s
        self.attempts = attempts
        self.attempt_log = attempt_log or []
        self.request = request or {}


def _usage(body: JSONDict) -> dict[str, int]:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return {}
    out = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[key] = value
    return out


def _with_usage(log: list[JSONDict], final_text: str) -> list[JSONDict]:
    """The attempt log with each attempt's token counts (from its body, where one came)."""
    out = []
    for i, entry in enumerate(log):
        entry = dict(entry)
        text = final_text if i == len(log) - 1 and entry["outcome"] == "ok" else entry.get("body")
        try:
            data = json.loads(text) if isinstance(text, str) else None
        except (ValueError, RecursionError):
            data = None
        entry["usage"] = _usage(data) if isinstance(data, dict) else {}
        out.append(entry)
    return out


def summed_usage(log: list[JSONDict]) -> dict[str, int]:
    """Token counts of every attempt in ``log``, added up."""
    total: dict[str, int] = {}
    for entry in log:
        for key, value in (entry.get("usage") or {}).items():
            total[key] = total.get(key, 0) + value
    return total


class ChatClient:
    """Sends chat-completions requests for one ``model`` at ``base_url`` (e.g.
    ``http://localhost:11434/v1``).

    The API key is read from the environment variable ``api_key_env`` when set (local servers
    need none). Transport errors, timeouts, 429 and 5xx are retried ``retries`` times with
    exponential backoff starting at ``backoff`` seconds; ``timeout`` bounds each attempt.
    ``on_failed_attempt`` hears of each failed attempt as it happens (see
    :class:`~magma_core.agents._http.FailedAttempt`).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        transport: httpx.BaseTransport | None = None,
        on_failed_attempt: Callable[[FailedAttempt], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.on_failed_attempt = on_failed_attempt
        self._cancel = threading.Event()
        self._tracker: SocketTracker | None = None
        if transport is None:
            transport, self._tracker = cancellable_transport()
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_reply_bytes = max_reply_bytes
        self.api_key_env = api_key_env
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        self.has_api_key = bool(key)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(headers=headers, transport=transport, timeout=timeout)

    def complete(self, messages: list[JSONDict], stream_cap: int | None = None, **params: JSONValue) -> ChatReply:
        """POST one chat completion (``params`` go into the body, e.g. ``tools``,
        ``temperature``, ``max_tokens``) and return the first choice; raise :class:`ChatError`.
        With ``stream_cap`` the reply is streamed and reading stops (the connection is
        closed) once it holds more than that many tokens: the reply so far comes back with
        ``finish_reason`` ``length``."""
        body = {"model": self.model, "messages": messages, **params}
        if stream_cap is not None:
            return self._streamed(body, stream_cap)
        try:
            reply = request_with_retries(
                self._client, "POST", f"{self.base_url}/chat/completions", json_body=body,
                timeout=self.timeout, retries=self.retries, backoff=self.backoff,
                max_bytes=self.max_reply_bytes, on_failed_attempt=self.on_failed_attempt,
                cancel=self._cancel,
            )
        except TransportFailure as exc:
            raise ChatError(exc.code, exc.message, "", exc.latency_s, exc.attempts,
                            _with_usage(exc.attempt_log, ""), body) from None
        log = _with_usage(reply.attempt_log, reply.text)
        if reply.status != 200:
            raise ChatError(
                "http_error",
                f"HTTP {reply.status} from {self.base_url}/chat/completions: {clip(reply.text, 300)}",
                reply.text, reply.latency_s, reply.attempts, log, body,
            )
        try:
            data = json.loads(reply.text)
            choice = data["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(
                "invalid_reply",
                f"the reply is not a chat completion ({type(exc).__name__}: {clip(str(exc), 200)})",
                reply.text, reply.latency_s, reply.attempts, log, body,
            ) from None
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return ChatReply(
            message=message,
            raw=reply.text,
            usage=summed_usage(log),
            latency_s=reply.latency_s,
            attempts=reply.attempts,
            finish_reason=finish if isinstance(finish, str) else None,
            attempt_log=log,
            request=body,
        )

    def _streamed(self, body: JSONDict, cap: int) -> ChatReply:
        """One streamed attempt (see :meth:`complete`); server-sent events read until
        ``[DONE]``, the cap or the deadline."""
        body = {**body, "stream": True}
        began = time.monotonic()
        deadline = began + self.timeout
        content: list[str] = []
        calls: dict[int, JSONDict] = {}
        tokens, finish, usage, status, text = 0, None, {}, 0, ""
        try:
            with self._client.stream("POST", f"{self.base_url}/chat/completions", json=body,
                                     timeout=self.timeout) as response:
                status = response.status_code
                if status != 200:
                    text = response.read().decode("utf-8", errors="replace")[:20_000]
                else:
                    for line in response.iter_lines():
                        if self._cancel.is_set():
                            raise ChatError("cancelled", "the request was cancelled", request=body)
                        if time.monotonic() > deadline:
                            raise httpx.ReadTimeout("reply not complete before the deadline")
                        data = line[5:].strip() if line.startswith("data:") else ""
                        if not data:
                            continue
                        if data == "[DONE]":
                            break
                        try:
                            event = json.loads(data)
                            choice = (event.get("choices") or [{}])[0]
                        except (ValueError, AttributeError, TypeError, IndexError, RecursionError):
                            continue
                        usage = _usage(event) or usage
                        if not isinstance(choice, dict):
                            continue
                        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
                        finish = choice.get("finish_reason") or finish
                        if isinstance(delta.get("content"), str) and delta["content"]:
                            content.append(delta["content"])
                            tokens += 1
                        for call in delta.get("tool_calls") or []:
                            if not isinstance(call, dict):
                                continue
                            slot = calls.setdefault(call.get("index", 0), {"id": call.get("id"), "type": "function",
                                                                          "function": {"name": "", "arguments": ""}})
                            function = call.get("function") or {}
                            slot["function"]["name"] += function.get("name") or ""
                            slot["function"]["arguments"] += function.get("arguments") or ""
                            tokens += 1
                        if tokens > cap:
                            finish = "length"
                            break
        except httpx.TimeoutException as exc:
            raise ChatError("timeout", f"no complete reply within {self.timeout:g} s ({type(exc).__name__})",
                            latency_s=time.monotonic() - began, request=body) from None
        except httpx.HTTPError as exc:
            code = "cancelled" if self._cancel.is_set() else "transport_error"
            raise ChatError(code, f"{type(exc).__name__}: {exc}", latency_s=time.monotonic() - began,
                            request=body) from None
        latency = time.monotonic() - began
        if status != 200:
            raise ChatError("http_error", f"HTTP {status} from {self.base_url}/chat/completions: {clip(text, 300)}",
                            text, latency, 1, [{"attempt": 1, "outcome": "ok", "status": status,
                                                 "latency_s": round(latency, 6), "usage": {}}], body)
        message: JSONDict = {"role": "assistant", "content": "".join(content) or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        usage = usage or {"completion_tokens": tokens}
        log = [{"attempt": 1, "outcome": "ok", "status": 200, "latency_s": round(latency, 6), "usage": usage,
                "streamed_tokens": tokens}]
        raw = json.dumps({"choices": [{"message": message, "finish_reason": finish}], "usage": usage, "streamed": True})
        return ChatReply(message=message, raw=raw, usage=dict(usage), latency_s=latency, attempts=1,
                         finish_reason=finish, attempt_log=log, request=body)

    def list_models(self, timeout: float = 10.0, max_bytes: int = 4 * 1024 * 1024) -> ModelList:
        """``GET {base_url}/models`` once (no retries, at most ``timeout`` seconds, which the
        caller chooses: it may exceed the client's per-reply timeout). Any HTTP status is returned; raise :class:`ChatError`
        (``timeout``, ``transport_error``, ``response_too_large``) when no reply came."""
        url = f"{self.base_url}/models"
        try:
            reply = request_with_retries(
                self._client, "GET", url, timeout=timeout, retries=0,
                backoff=0.0, max_bytes=max_bytes,
            )
        except TransportFailure as exc:
            raise ChatError(exc.code, exc.message, "", exc.latency_s, exc.attempts) from None
        except (httpx.InvalidURL, ValueError) as exc:  # a base URL httpx cannot use
            raise ChatError("transport_error", f"{type(exc).__name__}: {exc}") from None
        models = _model_ids(reply.text) if reply.status == 200 else None
        return ModelList(reply.status, models, reply.text)

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop the requests in flight (they fail with ``cancelled``) and refuse new ones."""
        self._cancel.set()
        if self._tracker is not None:
            self._tracker.shutdown_all()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
