"""The coaching routes ``magma serve-agent`` mounts (protocol 2.0, the predecessor's):

- ``PUT /v1/coaching/sessions/{run_id}``: open a session (204); the same config again is
  fine (204), another one for an open run is a conflict (409);
- ``POST /v1/coaching``: answer a request of an open session (404 when it is unknown or
  closing; 422 for a body that is not a request);
- ``DELETE /v1/coaching/sessions/{run_id}``: close it (204; 404 when unknown).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.protocol.coaching import CoachingRequest, CoachingResponse, CoachingSessionConfig

if TYPE_CHECKING:  # named for the annotations only
    from fastapi import FastAPI

Service = Callable[[CoachingRequest, CoachingSessionConfig], CoachingResponse]


class CoachingSessions:
    """Open coaching sessions by run id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, CoachingSessionConfig] = {}

    def open(self, run_id: str, config: CoachingSessionConfig) -> bool:
        """Open (or confirm) a session; False on a conflicting reconfiguration."""
        with self._lock:
            have = self._open.get(run_id)
            if have is not None and have != config:
                return False
            self._open[run_id] = config
            return True

    def get(self, run_id: str) -> CoachingSessionConfig | None:
        with self._lock:
            return self._open.get(run_id)

    def close(self, run_id: str) -> bool:
        with self._lock:
            return self._open.pop(run_id, None) is not None


def mount_coaching_routes(app: FastAPI, service: Service, sessions: CoachingSessions | None = None) -> CoachingSessions:
    """Add the coaching routes to the FastAPI ``app``; ``service`` answers each request."""
    from fastapi import HTTPException, Response

    sessions = sessions or CoachingSessions()

    @app.put("/v1/coaching/sessions/{run_id}", status_code=204, response_model=None)
    def open_session(run_id: str, config: CoachingSessionConfig) -> Response:
        if not sessions.open(run_id, config):
            raise HTTPException(409, f"coaching session {run_id!r} is open with another configuration")
        return Response(status_code=204)

    @app.delete("/v1/coaching/sessions/{run_id}", status_code=204, response_model=None)
    def close_session(run_id: str) -> Response:
        if not sessions.close(run_id):
            raise HTTPException(404, f"no coaching session {run_id!r}")
        return Response(status_code=204)

    @app.post("/v1/coaching")
    def coaching(request: CoachingRequest) -> JSONDict:
        config = sessions.get(request.run_id)
        if config is None:
            raise HTTPException(404, f"no open coaching session {request.run_id!r}")
        try:
            response = service(request, config)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            # a request the coach cannot use (it validated, but its contents do not fit)
            raise HTTPException(422, f"the coaching request cannot be used: "
                                     f"{type(exc).__name__}: {str(exc)[:200]}") from None
        try:
            response.validate_request(request)
        except ValueError as exc:
            raise HTTPException(500, f"the coaching service produced an invalid response: {exc}") from None
        return response.model_dump(mode="json")

    return sessions
