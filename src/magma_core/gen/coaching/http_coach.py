"""The ``http://HOST:PORT`` coach: the agent's own coaching service (protocol 2.0 routes).

The first request opens a session (``PUT /v1/coaching/sessions/{run_id}``, provider
``builtin``), each opportunity is one ``POST /v1/coaching``, and :meth:`HttpCoach.close` ends
the session (``DELETE``). Any HTTP status, transport error or body that is not a valid
:class:`~magma_core.protocol.coaching.CoachingResponse` for the request becomes an ``error``
answer keeping the raw body.
"""

from __future__ import annotations

from typing import Any

import httpx

from magma_core.gen.coaching.coach_protocol import (
    CoachContext,
    CoachReply,
    error_reply,
    parse_response,
)
from magma_core.protocol.coaching import CoachingRequest, CoachingSessionConfig

DEFAULT_TIMEOUT_S = 360.0  # the predecessor's coaching timeout


class HttpCoach:
    """Coaching by the agent server at ``base_url``."""

    def __init__(self, base_url: str, *, timeout: float | None = None, transport: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = self.base_url
        self._client = httpx.Client(timeout=timeout or DEFAULT_TIMEOUT_S, transport=transport)
        self._sessions: set[str] = set()

    def coach(self, request: CoachingRequest, context: CoachContext) -> CoachReply:
        try:
            if request.run_id not in self._sessions:
                put = self._client.put(f"{self.base_url}/v1/coaching/sessions/{request.run_id}",
                                       json=CoachingSessionConfig().model_dump(mode="json"))
                if put.status_code != 204:
                    return error_reply(request, f"opening the coaching session: HTTP {put.status_code}", put.text)
                self._sessions.add(request.run_id)
            reply = self._client.post(f"{self.base_url}/v1/coaching", json=request.model_dump(mode="json"))
        except httpx.HTTPError as exc:
            return error_reply(request, f"coaching service unreachable: {type(exc).__name__}: {exc}")
        if reply.status_code != 200:
            if reply.status_code == 404:
                self._sessions.discard(request.run_id)
            return error_reply(request, f"coaching service answered HTTP {reply.status_code}", reply.text)
        return CoachReply(parse_response(reply.text, request), raw=reply.text)

    def close(self) -> None:
        for run_id in sorted(self._sessions):
            try:
                self._client.delete(f"{self.base_url}/v1/coaching/sessions/{run_id}")
            except httpx.HTTPError:
                pass
        self._sessions.clear()
        self._client.close()
