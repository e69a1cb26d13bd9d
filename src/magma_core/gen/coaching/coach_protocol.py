"""What a coach is and how it is asked: the protocol every coach is written against.

A coach is a plain object with ``name`` and ``coach(request, context) -> CoachReply``: it
receives a :class:`~magma_core.protocol.coaching.CoachingRequest` (the stage trajectory, the
terminal feedback, the reinjection points; ``target_step_id`` set when exactly one decision is
diagnosable) and answers a :class:`~magma_core.protocol.coaching.CoachingResponse` plus the raw
text it got (a model's reply, an HTTP body) for the store. A coach never raises on a bad
answer: :func:`ask_coach` turns any exception or invalid answer into an ``error`` reply, and
:func:`error_reply`, :func:`abandon` and :func:`parse_response` are the replies every coach
builds. This module sits below the coaches (:mod:`.trace_coach`, :mod:`.model_coach`,
:mod:`.http_coach`) and below :mod:`.coaches`, which builds the request and picks a coach.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from magma_core.protocol.coaching import CoachingRequest, CoachingResponse


@dataclass
class CoachContext:
    """What the generator knows beside the request: the tree, its task's stage objects and
    its reference trace in the vocabulary the agent sees (None: the task has none)."""

    tree: int
    stages: list[Any]
    reference: Any = None


@dataclass
class CoachReply:
    """A coach's answer and the raw text it was parsed from."""

    response: CoachingResponse
    raw: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


class Coach(Protocol):
    name: str

    def coach(self, request: CoachingRequest, context: CoachContext) -> CoachReply: ...

    def close(self) -> None: ...


def ask_coach(coach: Coach, request: CoachingRequest, context: CoachContext) -> CoachReply:
    """``coach.coach(request, context)``, checked; any exception or invalid answer becomes an
    ``error`` reply that keeps what was received."""
    try:
        reply = coach.coach(request, context)
        reply.response.validate_request(request)
        return reply
    except (ValidationError, ValueError) as exc:
        raw = getattr(exc, "raw", "")
        return error_reply(request, f"invalid coaching answer: {_first_line(exc)}", raw)
    except Exception as exc:  # a coach's bug or transport trouble never stops a generation
        return error_reply(request, f"{type(exc).__name__}: {_first_line(exc)}", getattr(exc, "raw", ""))


def error_reply(request: CoachingRequest, reason: str, raw: str = "") -> CoachReply:
    return CoachReply(CoachingResponse(request_id=request.request_id, status="error",
                                       reason=reason[:2000] or "error"), raw=raw)


def abandon(request: CoachingRequest, reason: str) -> CoachReply:
    return CoachReply(CoachingResponse(request_id=request.request_id, status="abandoned", reason=reason))


def parse_response(text: str, request: CoachingRequest) -> CoachingResponse:
    """A :class:`CoachingResponse` from JSON text; ``ValueError`` (with ``raw``) if it is not one."""
    try:
        return CoachingResponse.model_validate(json.loads(text)).validate_request(request)
    except (ValueError, ValidationError) as exc:
        error = ValueError(f"not a coaching response: {_first_line(exc)}")
        error.raw = text  # type: ignore[attr-defined]
        raise error from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
