"""One HTTP exchange with bounded retries, a total deadline per attempt and a size cap.

Shared by the protocol 2.0 client and the OpenAI-compatible client. Transport errors, timeouts,
HTTP 429 and 5xx are retried with exponential backoff; anything else is returned at once.
Every attempt is logged (outcome, seconds, status, body of a failed reply), a failed attempt is
announced through ``on_failed_attempt`` as it happens, and a ``cancel`` event stops waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from magma_core.json_types import JSONDict, JSONValue

MAX_BACKOFF_S = 10.0


@dataclass
class HttpReply:
    """The final reply: status, body text, attempts made and seconds spent in total."""

    status: int
    text: str
    attempts: int
    latency_s: float
    attempt_log: list[JSONDict] = field(default_factory=list)


@dataclass(frozen=True)
class FailedAttempt:
    """What ``on_failed_attempt`` hears: attempt ``attempt`` of at most ``of`` failed with
    ``reason`` after ``latency_s``; ``retry_in_s`` is None when no attempt follows."""

    attempt: int
    of: int
    reason: str
    latency_s: float
    retry_in_s: float | None


class TransportFailure(Exception):
    """No usable reply after all attempts. ``code`` is ``timeout``, ``transport_error``,
    ``response_too_large`` or ``cancelled``."""

    def __init__(self, code: str, message: str, attempts: int, latency_s: float) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.attempts = attempts
        self.latency_s = latency_s
        self.attempt_log: list[JSONDict] = []


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _read_limited(response: httpx.Response, max_bytes: int, deadline: float) -> str:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise TransportFailure(
                "response_too_large", f"response larger than {max_bytes} bytes", 0, 0.0
            )
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("response not complete before the deadline")
        chunks.append(chunk)
    return b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")


def _attempt(
    client: httpx.Client, method: str, url: str, json_body: JSONValue, timeout: float, max_bytes: int
) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    with client.stream(method, url, json=json_body, timeout=timeout) as response:
        return response.status_code, _read_limited(response, max_bytes, deadline)


def request_with_retries(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    json_body: JSONValue = None,
    timeout: float,
    retries: int,
    backoff: float,
    max_bytes: int,
    on_failed_attempt: Callable[[FailedAttempt], None] | None = None,
    cancel: threading.Event | None = None,
) -> HttpReply:
    """Send one request, retrying ``retries`` times on transport errors, timeouts, 429 and 5xx.

    Returns the last reply (whatever its status) or raises :class:`TransportFailure`. Each
    failed attempt is reported to ``on_failed_attempt`` (exceptions there are ignored); once
    ``cancel`` is set no further attempt starts and no backoff is waited out.
    """
    start = time.monotonic()
    attempts = 0
    log: list[JSONDict] = []
    while True:
        attempts += 1
        if cancel is not None and cancel.is_set():
            raise _failed(TransportFailure("cancelled", "the request was cancelled", 0, 0.0), attempts - 1, start, log)
        began = time.monotonic()
        failure: TransportFailure | None = None
        try:
            status, text = _attempt(client, method, url, json_body, timeout, max_bytes)
        except TransportFailure as exc:  # too large: retrying would not help
            log.append(_entry(attempts, began, exc.code))
            raise _failed(exc, attempts, start, log) from None
        except httpx.TimeoutException as exc:
            failure = TransportFailure(
                "timeout", f"no complete reply within {timeout:g} s ({type(exc).__name__})", 0, 0.0
            )
        except httpx.HTTPError as exc:
            if cancel is not None and cancel.is_set():
                failure = TransportFailure("cancelled", "the request was cancelled", 0, 0.0)
            else:
                failure = TransportFailure("transport_error", f"{type(exc).__name__}: {exc}", 0, 0.0)
        if failure is None:
            log.append(_entry(attempts, began, "ok" if not _retryable(status) else f"http_{status}", status,
                              None if not _retryable(status) else clip(text, 2000)))
        else:
            log.append(_entry(attempts, began, failure.code))
        if failure is None and not _retryable(status):
            return HttpReply(status, text, attempts, time.monotonic() - start, log)
        final = attempts > retries or (failure is not None and failure.code == "cancelled")
        delay = None if final else min(MAX_BACKOFF_S, backoff * (2 ** (attempts - 1)))
        reason = failure.message if failure is not None else f"HTTP {status}"
        if on_failed_attempt is not None:
            try:
                on_failed_attempt(FailedAttempt(attempts, retries + 1, reason, log[-1]["latency_s"], delay))
            except Exception:  # noqa: BLE001 - a display hook must not break the request
                pass
        if final:
            if failure is None:
                return HttpReply(status, text, attempts, time.monotonic() - start, log)
            if failure.code != "cancelled":
                failure.message = f"{failure.message} (after {attempts} attempts)"
            raise _failed(failure, attempts, start, log)
        if cancel is not None:
            cancel.wait(delay)
        else:
            time.sleep(delay)


def _entry(attempt: int, began: float, outcome: str, status: int | None = None, text: str | None = None) -> JSONDict:
    entry: JSONDict = {"attempt": attempt, "outcome": outcome, "latency_s": round(time.monotonic() - began, 6)}
    if status is not None:
        entry["status"] = status
    if text is not None:
        entry["body"] = text
    return entry


def _failed(exc: TransportFailure, attempts: int, start: float, log: list[JSONDict]) -> TransportFailure:
    exc.attempts, exc.latency_s, exc.attempt_log = attempts, time.monotonic() - start, log
    exc.args = (exc.message,)
    return exc


def clip(text: str, limit: int = 20_000) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"
