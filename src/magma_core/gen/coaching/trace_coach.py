"""The ``trace`` coach: an oracle that knows the task's reference solution; no model needed.

The reference trace (a preset's perfect trace, or the trace a definition's request chain
generated for the tree's task) is split into stages by the stages' budgets (an action stage
takes decisions until its ``target_tool_calls`` calls are made, a text-only stage its answer).
The diagnosis is the first diagnosable decision of the stage that differs from the stage's
reference decision at the same position (when the generator already named one, that one);
the repair is that reference decision, as ``replace_decision`` (``replace_say`` in a text-only
stage), with ``reference_index`` (its position in the whole trace) so that a trace agent can
keep its cursor consistent. When the wrong decision's tool calls all failed and the stage went
on, a ``recovery`` proposal is added too: the same reference decision after that failure's
feedback, so rows also teach recovering after an error.
"""

from __future__ import annotations

from typing import Any

from magma_core.gen.coaching.coach_protocol import CoachContext, CoachReply, abandon
from magma_core.protocol.agent import AgentDecision
from magma_core.protocol.coaching import (
    CoachingDiagnosis,
    CoachingProposal,
    CoachingRequest,
    CoachingResponse,
)


def split_reference(decisions: list[Any], stages: list[Any]) -> list[list[int]]:
    """Per stage, the positions in ``decisions`` of its reference decisions."""
    out: list[list[int]] = []
    i, n = 0, len(decisions)
    for k, stage in enumerate(stages):
        mine: list[int] = []
        if stage.is_text_only():
            while i < n and decisions[i].tool_calls:  # a stray call: give it to this stage
                mine.append(i)
                i += 1
            if i < n:
                mine.append(i)
                i += 1
        else:
            calls, target = 0, stage.target_tool_calls or 0
            while i < n and calls < target:
                calls += len(decisions[i].tool_calls)
                mine.append(i)
                i += 1
            next_text = k + 1 < len(stages) and stages[k + 1].is_text_only()
            while i < n and not decisions[i].tool_calls and not next_text:
                mine.append(i)
                i += 1
        out.append(mine)
    if out and i < n:
        out[-1].extend(range(i, n))
    return out


def same_decision(step: dict[str, Any] | None, reference: AgentDecision, text_only: bool) -> bool:
    """Whether a stored decision is the reference one (tool names and arguments; the words
    count only in a text-only stage)."""
    if step is None:
        return False
    calls = [(c.get("name"), c.get("arguments") or {}) for c in step.get("tool_calls") or []]
    if calls != [(c.name, c.arguments) for c in reference.tool_calls]:
        return False
    return not text_only or (step.get("say") or "").strip() == reference.say.strip()


class TraceCoach:
    """The oracle coach of ``--coach trace``."""

    name = "trace"

    def coach(self, request: CoachingRequest, context: CoachContext) -> CoachReply:
        if context.reference is None:
            return abandon(request, "the task has no reference trace")
        decisions = context.reference.decisions()
        stage = request.stage.index
        split = split_reference(decisions, context.stages)
        if stage >= len(split) or not split[stage]:
            return abandon(request, f"the reference trace has no decision for stage {stage}")
        mine = split[stage]
        text_only = bool(context.stages[stage].is_text_only())
        steps = request.trajectory
        robots = _robots(steps[0].input)
        reference = [AgentDecision.from_decision(decisions[i], robots[0] if len(robots) == 1 else None)
                     for i in mine]
        if request.target_step_id is not None:
            target = request.target_step_id
        else:
            target = next((s.id for s in steps if s.diagnosable and (
                s.id >= len(reference) or not same_decision(s.decision, reference[s.id], text_only))), None)
        if target is None:
            return abandon(request, "every decision of the stage is the reference's")
        if target >= len(reference):
            return abandon(request, f"the reference solves stage {stage} in {len(reference)} decisions; "
                                    f"decision {target} has none to compare with")
        expected = reference[target]
        if same_decision(steps[target].decision, expected, text_only) and request.kind != "format":
            return abandon(request, f"decision {target} already is the reference decision")
        if text_only:
            repair: dict[str, Any] = {"kind": "replace_say", "text": expected.say}
        else:
            repair = {"kind": "replace_decision", "decision": expected.model_dump()}
        repair["reference_index"] = mine[target]
        proposals = [CoachingProposal(reinjection_point_id=f"replace:{target}", extra_keys=repair)]
        if request.point(f"recovery:{target}") is not None:
            proposals.append(CoachingProposal(reinjection_point_id=f"recovery:{target}",
                                              extra_keys=dict(repair)))
        diagnosis = CoachingDiagnosis(
            step_id=target, expected_decision=expected.model_dump(),
            explanation=(request.diagnosis.explanation if request.diagnosis else
                         f"decision {target} of stage {stage} departs from the reference solution"))
        return CoachReply(CoachingResponse(request_id=request.request_id, status="corrected",
                                           proposals=proposals, diagnosis=diagnosis))

    def close(self) -> None:
        pass


def _robots(agent_input: dict[str, Any]) -> list[str]:
    robots = (agent_input.get("attributes") or {}).get("known_robots") or []
    if isinstance(robots, dict):
        robots = list(robots)
    return [r for r in robots if isinstance(r, str)]
