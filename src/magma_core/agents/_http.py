"""One HTTP exchange with bounded retries, a total deadline per attempt and a size cap.

Shared by the protocol 2.0 client and the OpenAI-compatible client. Transport errors, timeouts,
HTTP 429 and 5xx are retried with exponential backoff; anything else is returned at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

MAX_BACKOFF_S = 10.0


@dataclass
class HttpReply:
    """The final reply: status, body text, attempts made and seconds spent in total."""

    status: int
    text: str
    attempts: int
    latency_s: float


class TransportFailure(Exception):
    """No usable reply after all attempts. ``code`` is ``timeout``, ``transport_error`` or
    ``response_too_large``."""

    def __init__(self, code: str, message: str, attempts: int, latency_s: float) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.attempts = attempts
        self.latency_s = latency_s


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
    client: httpx.Client, method: str, url: str, json_body: Any, timeout: float, max_bytes: int
) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    with client.stream(method, url, json=json_body, timeout=timeout) as response:
        return response.status_code, _read_limited(response, max_bytes, deadline)


def request_with_retries(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    json_body: Any = None,
    timeout: float,
    retries: int,
    backoff: float,
    max_bytes: int,
) -> HttpReply:
    """Send one request, retrying ``retries`` times on transport errors, timeouts, 429 and 5xx.

    Returns the last reply (whatever its status) or raises :class:`TransportFailure`.
    """
    start = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        failure: TransportFailure | None = None
        try:
            status, text = _attempt(client, method, url, json_body, timeout, max_bytes)
        except TransportFailure as exc:  # too large: retrying would not help
            exc.attempts, exc.latency_s = attempts, time.monotonic() - start
            raise
        except httpx.TimeoutException as exc:
            failure = TransportFailure(
                "timeout", f"no complete reply within {timeout:g} s ({type(exc).__name__})", 0, 0.0
            )
        except httpx.HTTPError as exc:
            failure = TransportFailure("transport_error", f"{type(exc).__name__}: {exc}", 0, 0.0)
        if failure is None and not _retryable(status):
            return HttpReply(status, text, attempts, time.monotonic() - start)
        if attempts > retries:
            if failure is None:
                return HttpReply(status, text, attempts, time.monotonic() - start)
            failure.attempts, failure.latency_s = attempts, time.monotonic() - start
            failure.message = f"{failure.message} (after {attempts} attempts)"
            failure.args = (failure.message,)
            raise failure
        time.sleep(min(MAX_BACKOFF_S, backoff * (2 ** (attempts - 1))))


def clip(text: str, limit: int = 20_000) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"
