"""The coach interface, the request a coach is shown, and ``--coach SPEC``.

A coach is a plain object with ``name`` and ``coach(request, context) -> CoachReply``: it
receives a :class:`~magma_core.protocol.coaching.CoachingRequest` (the stage trajectory, the
terminal feedback, the reinjection points; ``target_step_id`` set when exactly one decision is
diagnosable) and answers a :class:`~magma_core.protocol.coaching.CoachingResponse` plus the raw
text it got (a model's reply, an HTTP body) for the store. A coach never raises on a bad
answer: :func:`ask_coach` turns any exception or invalid answer into an ``error`` reply.

Specs: ``trace`` (:mod:`.trace_coach`), ``openai:MODEL[@BASE_URL]`` (:mod:`.model_coach`),
``http://HOST:PORT`` (:mod:`.http_coach`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from magma_core.gen.coaching.opportunities import KIND, Trajectory
from magma_core.protocol.coaching import (
    CoachingDiagnosis,
    CoachingRequest,
    CoachingResponse,
    CoachingStage,
    CoachingStep,
    ReinjectionPoint,
)
from magma_core.user_error import UserError


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


def build_request(run_id: str, request_id: str, event: str, trajectory: Trajectory,
                  goal: str, feedback: str) -> CoachingRequest:
    """The request for ``trajectory`` (step ids are positions in it): one ``replace:<i>``
    point per diagnosable step, and ``recovery:<i>`` where step ``i``'s tool calls all failed
    and the stage went on (its feedback is in step ``i + 1``'s input)."""
    steps, points = [], []
    diagnosable = trajectory.diagnosable_steps()
    for i, (place, node) in enumerate(trajectory.steps):
        steps.append(CoachingStep(
            id=i, input=_input_of(place.agent_input), decision=node.decision, error=node.error,
            execution=_summary(node.execution), diagnosable=trajectory.diagnosable[i]))
    for i in diagnosable:
        points.append(ReinjectionPoint(id=f"replace:{i}", input_step_id=i))
        calls = (trajectory.steps[i][1].execution or {}).get("calls") or []
        if calls and not any(c.get("ok") for c in calls) and i + 1 < len(trajectory.steps):
            points.append(ReinjectionPoint(id=f"recovery:{i}", input_step_id=i + 1))
    stage = trajectory.steps[-1][1].stage
    target = diagnosable[0] if len(diagnosable) == 1 else None
    return CoachingRequest(
        run_id=run_id, request_id=request_id, kind=KIND[event], event=event,  # type: ignore[arg-type]
        stage=CoachingStage(index=stage, goal=goal), target_step_id=target, trajectory=steps,
        reinjection_points=points, feedback=feedback,
        diagnosis=None if target is None else deterministic_diagnosis(event, target, feedback),
    )


def deterministic_diagnosis(event: str, step: int, feedback: str) -> CoachingDiagnosis:
    """The diagnosis when one decision is diagnosable: that one, with the event's reason."""
    why = {"failure": "the stage failed after this decision",
           "no_action": "this decision did nothing in an action stage",
           "exceeded": "the stage's budget was exceeded after this decision",
           "format_error": "this answer was not a valid decision",
           "finish_suboptimal": "the stage finished with more tool calls than needed"}[event]
    return CoachingDiagnosis(step_id=step, explanation=f"{why}: {feedback}".rstrip(": "))


def terminal_feedback(execution: dict[str, Any] | None, error: dict[str, Any] | None) -> str:
    """The feedback of the terminal decision: failed calls, the verdict, the agent error."""
    if error:
        return f"{error.get('code', 'error')}: {error.get('message', '')}"
    execution = execution or {}
    lines = [f"{c.get('tool')} failed: {c.get('message')}" for c in execution.get("calls") or []
             if not c.get("ok")]
    for key in ("failure_reason", "message"):
        if execution.get(key):
            lines.append(str(execution[key]))
    lines.append(f"stage {execution.get('stage_success', '?')} / {execution.get('stage_state', '?')}")
    return "; ".join(lines)


def _input_of(agent_input: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in agent_input.items() if k != "num_outputs"}


def _summary(execution: dict[str, Any] | None) -> dict[str, Any] | None:
    if execution is None:
        return None
    keep = ("stage_success", "stage_state", "status", "message", "failure_reason", "verification",
            "tool_calls")
    out = {k: execution.get(k) for k in keep}
    out["calls"] = [{k: c.get(k) for k in ("robot", "tool", "arguments", "ok", "message", "failure_flag")}
                    for c in execution.get("calls") or []]
    return out


def ask_coach(coach: Any, request: CoachingRequest, context: CoachContext) -> CoachReply:
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


def build_coach(spec: str, options: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
    """The coach of ``--coach SPEC``; a bad spec is a :class:`UserError`."""
    if spec == "trace":
        from magma_core.gen.coaching.trace_coach import TraceCoach

        if options:
            raise UserError("coach options apply to an openai:MODEL coach, not to the trace coach")
        return TraceCoach()
    if spec.startswith("openai:"):
        from magma_core.gen.coaching.model_coach import ModelCoach

        return ModelCoach.from_spec(spec, options or {}, timeout)
    if spec.startswith(("http://", "https://")):
        from magma_core.gen.coaching.http_coach import HttpCoach

        if options:
            raise UserError("coach options apply to an openai:MODEL coach, not to an http:// coach")
        return HttpCoach(spec, timeout=timeout)
    raise UserError(f"unknown coach {spec!r}: use trace, openai:MODEL[@BASE_URL] or http://HOST:PORT")
