"""The request a coach is shown, and ``--coach SPEC``.

:func:`build_request` turns a failed stage's trajectory into a
:class:`~magma_core.protocol.coaching.CoachingRequest` (the stage trajectory, the terminal
feedback, the reinjection points; ``target_step_id`` and a deterministic diagnosis when exactly
one decision is diagnosable); :func:`build_coach` makes the coach a spec names. What a coach is
(:class:`Coach`, :class:`CoachReply`) and how it is asked (:func:`ask_coach`, which never lets a
bad answer raise) live below in :mod:`.coach_protocol`, re-exported here.

Specs: ``trace`` (:mod:`.trace_coach`), ``openai:MODEL[@BASE_URL]`` (:mod:`.model_coach`),
``http://HOST:PORT`` (:mod:`.http_coach`).
"""

from __future__ import annotations

from typing import Any

from magma_core.gen.coaching.coach_protocol import (
    Coach,
    CoachContext,
    CoachReply,
    abandon,
    ask_coach,
    error_reply,
    parse_response,
)
from magma_core.gen.coaching.http_coach import HttpCoach
from magma_core.gen.coaching.model_coach import ModelCoach
from magma_core.gen.coaching.opportunities import KIND, Trajectory
from magma_core.gen.coaching.trace_coach import TraceCoach
from magma_core.protocol.coaching import (
    CoachingDiagnosis,
    CoachingRequest,
    CoachingStage,
    CoachingStep,
    ReinjectionPoint,
)
from magma_core.user_error import UserError

__all__ = ["Coach", "CoachContext", "CoachReply", "abandon", "ask_coach", "build_coach", "build_request",
           "deterministic_diagnosis", "error_reply", "parse_response", "terminal_feedback"]


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


def build_coach(spec: str, options: dict[str, Any] | None = None, timeout: float | None = None) -> Coach:
    """The coach of ``--coach SPEC``; a bad spec is a :class:`UserError`."""
    if spec == "trace":
        if options:
            raise UserError("coach options apply to an openai:MODEL coach, not to the trace coach")
        return TraceCoach()
    if spec.startswith("openai:"):
        return ModelCoach.from_spec(spec, options or {}, timeout)
    if spec.startswith(("http://", "https://")):
        if options:
            raise UserError("coach options apply to an openai:MODEL coach, not to an http:// coach")
        return HttpCoach(spec, timeout=timeout)
    raise UserError(f"unknown coach {spec!r}: use trace, openai:MODEL[@BASE_URL] or http://HOST:PORT")
