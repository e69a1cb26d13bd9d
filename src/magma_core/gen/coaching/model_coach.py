"""The ``openai:MODEL[@BASE_URL]`` coach: an OpenAI-compatible model diagnoses and repairs.

It is shown the stage goal, the stage's trajectory (numbered decisions, which ones may be
repaired, what each did), the terminal feedback, and asked for one JSON object::

    {"decision_index": 2, "reason": "...", "repair": {"say": "", "tool_calls": [{"name": "place", "arguments": {"area": "zone_a"}}]}}

or ``{"abandon": "why"}``. A reply that is not such an object (or names a decision that cannot
be repaired) is retried once with the reason, then becomes an ``error`` answer that keeps the
raw reply; nothing the model says can stop a generation. Its own model options (temperature,
max_tokens, timeout), as the judge has its own.
"""

from __future__ import annotations

import json
import re
from typing import Any

from magma_core.agents.backends import chat_client
from magma_core.agents.chat_client import ChatError
from magma_core.agents.spec import AgentSpecError, parse_spec
from magma_core.gen.coaching.coach_protocol import CoachContext, CoachReply, abandon, error_reply
from magma_core.protocol.agent import AgentDecision
from magma_core.protocol.coaching import (
    CoachingDiagnosis,
    CoachingProposal,
    CoachingRequest,
    CoachingResponse,
)
from magma_core.text_safety import safe_text
from magma_core.user_error import UserError

SYSTEM_PROMPT = (
    "You coach a robot assistant that solves a task stage by stage by calling tools. A stage "
    "went wrong. Find the decision that caused it (the root cause, not always the last one) "
    "among the decisions marked repairable, and give the decision the assistant should have "
    'made there. Reply with only a JSON object: {"decision_index": <number>, "reason": '
    '"<one sentence>", "repair": {"say": "<text or empty>", "tool_calls": [{"name": "<tool>", '
    '"arguments": {...}}]}}, or {"abandon": "<why>"} when no single decision can be repaired.'
)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
OPTIONS = ("temperature", "max_tokens", "timeout", "max_attempts")


class ModelCoach:
    """Asks ``model`` at ``base_url`` for a diagnosis and a repair (see the module doc)."""

    def __init__(self, base_url: str, model: str, *, temperature: float = 0.0, max_tokens: int = 2000,
                 timeout: float = 120.0, max_attempts: int = 2, transport: Any = None,
                 backends: Any = (), routing: str = "failover") -> None:
        self.client = chat_client(base_url, model, backends, routing, timeout=timeout, transport=transport)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.max_attempts = max(1, max_attempts)
        self.name = f"openai:{model}"

    @classmethod
    def from_spec(cls, spec: str, options: dict[str, Any], timeout: float | None = None) -> ModelCoach:
        try:
            parsed = parse_spec(spec)
        except AgentSpecError as exc:
            raise UserError(str(exc)) from None
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise UserError(f"unknown coach option {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
        if timeout is not None:
            options = {**options, "timeout": timeout}
        if parsed.backends:
            options = {**options, "backends": parsed.backends, "routing": parsed.routing}
        return cls(parsed.base_url, parsed.model, **options)

    def coach(self, request: CoachingRequest, context: CoachContext) -> CoachReply:
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                          {"role": "user", "content": safe_text(_prompt(request))}]
        raw, problem = "", "no attempt made"
        for _ in range(self.max_attempts):
            try:
                reply = self.client.complete(messages, temperature=self.temperature, max_tokens=self.max_tokens)
            except ChatError as exc:
                return error_reply(request, f"{exc.code}: {exc.message}", exc.raw)
            content = reply.message.get("content")
            raw = content if isinstance(content, str) else reply.raw
            try:
                return CoachReply(_response(raw, request, context), raw=raw)
            except ValueError as exc:
                problem = str(exc)
                messages += [{"role": "assistant", "content": raw},
                             {"role": "user", "content": f"That reply is invalid ({problem}). "
                                                         "Reply with only the JSON object."}]
        return error_reply(request, f"invalid coaching answer: {problem}", raw)

    def close(self) -> None:
        self.client.close()


def _prompt(request: CoachingRequest) -> str:
    lines = [f"Stage {request.stage.index} goal: {request.stage.goal or '(not stated)'}",
             f"What went wrong ({request.event}): {request.feedback}", "Decisions of the stage:"]
    for step in request.trajectory:
        mark = "repairable" if step.diagnosable else "fixed"
        instruction = (step.input.get("instruction") or {}).get("content", "")
        lines.append(f"[{step.id}] ({mark}) input: {instruction}")
        lines.append(f"    decision: {json.dumps(step.decision or step.error)}")
        for call in (step.execution or {}).get("calls") or []:
            lines.append(f"    {call.get('tool')} {'ok' if call.get('ok') else 'failed'}: {call.get('message')}")
    if request.target_step_id is not None:
        lines.append(f"The decision to repair is [{request.target_step_id}].")
    tools = [t.get("name") for t in request.trajectory[-1].input.get("tools") or [] if isinstance(t, dict)]
    lines.append(f"Tools: {', '.join(str(t) for t in tools)}")
    return "\n".join(lines)


def _response(text: str, request: CoachingRequest, context: CoachContext) -> CoachingResponse:
    """The coaching response a model's reply means; ``ValueError`` saying what is wrong."""
    body = _THINK.sub("", text)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    if isinstance(data.get("abandon"), str) and data["abandon"].strip():
        return abandon(request, data["abandon"].strip()[:2000]).response
    index = data.get("decision_index")
    allowed = [s.id for s in request.trajectory if s.diagnosable]
    if request.target_step_id is not None:
        allowed = [request.target_step_id]
    if not isinstance(index, int) or isinstance(index, bool) or index not in allowed:
        raise ValueError(f"'decision_index' must be one of {allowed}, got {index!r}")
    repair = data.get("repair")
    if not isinstance(repair, dict):
        raise ValueError("'repair' must be an object with 'say' and 'tool_calls'")
    robots = ((request.trajectory[index].input.get("attributes") or {}).get("known_robots") or [])
    calls = []
    for call in repair.get("tool_calls") or []:
        if not isinstance(call, dict):
            raise ValueError("each tool call must be an object with 'name' and 'arguments'")
        robot = call.get("target_robot_name") or (robots[0] if len(robots) == 1 else None)
        calls.append({"name": call.get("name"), "arguments": call.get("arguments") or {},
                      "target_robot_name": robot})
    try:
        decision = AgentDecision.model_validate({"say": repair.get("say") or "", "tool_calls": calls})
    except Exception as exc:
        raise ValueError(f"invalid repair: {str(exc).splitlines()[0]}") from None
    stage = context.stages[request.stage.index] if request.stage.index < len(context.stages) else None
    if stage is not None and stage.is_text_only():
        if not decision.say.strip():
            raise ValueError("a text-only stage needs a non-empty 'say'")
        extra: dict[str, Any] = {"kind": "replace_say", "text": decision.say}
    else:
        if not decision.say and not decision.tool_calls:
            raise ValueError("the repair is empty")
        extra = {"kind": "replace_decision", "decision": decision.model_dump()}
    reason = data.get("reason") if isinstance(data.get("reason"), str) else ""
    return CoachingResponse(
        request_id=request.request_id, status="corrected",
        proposals=[CoachingProposal(reinjection_point_id=f"replace:{index}", extra_keys=extra)],
        diagnosis=CoachingDiagnosis(step_id=index, explanation=reason, expected_decision=decision.model_dump()))
