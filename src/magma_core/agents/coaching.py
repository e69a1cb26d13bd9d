"""The coaching service of a built-in agent (``POST /v1/coaching`` behind ``magma serve-agent``).

A trace or noisy-trace agent knows its reference: at each diagnosable step the trace cursor in
the step's input memory names the reference decision there, so the root cause is the first
step whose decision differs from it, and the repair is that reference decision (with its
``reference_index``, so that the agent's cursor stays consistent). Other agents have no
coaching of their own and answer ``abandoned``.
"""

from __future__ import annotations

from magma_core.agents.base import CandidateAgent, robot_names
from magma_core.agents.trace import CURSOR_KEY
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentDecision
from magma_core.protocol.coaching import (
    CoachingDiagnosis,
    CoachingProposal,
    CoachingRequest,
    CoachingResponse,
    CoachingSessionConfig,
)


def has_coaching(agent: object) -> bool:
    """Whether ``agent`` can coach from its own reference (a trace agent's decisions)."""
    return isinstance(getattr(agent, "decisions", None), list)


def coach_with_agent(agent: CandidateAgent, request: CoachingRequest, config: CoachingSessionConfig) -> CoachingResponse:
    """``agent``'s answer to ``request`` (see the module doc)."""
    def abandoned(reason: str) -> CoachingResponse:
        return CoachingResponse(request_id=request.request_id, status="abandoned", reason=reason)

    if not has_coaching(agent):
        return abandoned(f"agent {agent.agent_id} has no coaching of its own")
    steps = [s for s in request.trajectory if s.diagnosable]
    if request.target_step_id is not None:
        steps = [s for s in steps if s.id == request.target_step_id]
    for step in steps:
        cursor = (step.input.get("memory") or {}).get(CURSOR_KEY, 0)
        if not isinstance(cursor, int) or isinstance(cursor, bool) or not 0 <= cursor < len(agent.decisions):
            continue
        robots = robot_names(step.input.get("attributes") or {})
        expected = AgentDecision.from_decision(agent.decisions[cursor], robots[0] if len(robots) == 1 else None)
        if _same(step.decision, expected) and request.kind != "format":
            continue
        repair: JSONDict = {"kind": "replace_decision", "decision": expected.model_dump(),
                                  "reference_index": cursor}
        return CoachingResponse(
            request_id=request.request_id, status="corrected",
            proposals=[CoachingProposal(reinjection_point_id=f"replace:{step.id}", extra_keys=repair)],
            diagnosis=CoachingDiagnosis(step_id=step.id, expected_decision=expected.model_dump(),
                                        explanation=f"decision {step.id} departs from the agent's reference"))
    return abandoned("every repairable decision is the reference's")


def _same(decision: JSONDict | None, expected: AgentDecision) -> bool:
    if decision is None:
        return False
    calls = [(c.get("name"), c.get("arguments") or {}) for c in decision.get("tool_calls") or []]
    return calls == [(c.name, c.arguments) for c in expected.tool_calls] and \
        (bool(expected.tool_calls) or (decision.get("say") or "") == expected.say)
