"""Our terminal statuses on the report's taxonomy: the predecessor's (gen-bench-spec §2), plus
``trace_exhausted``, which names a (noisy) trace agent's trace that ran out as such.

| ours (engine / run loop) | predecessor | why |
| --- | --- | --- |
| ``success`` | ``success`` | every stage verified |
| ``failed`` | ``non_requested_action`` | a stage's verification failed: the agent did something other than what was asked (e.g. a tool call on a text-only stage that forbids tools) |
| ``exceeded`` | ``budget_exceeded`` | a stage's tool-call budget ran out |
| ``decision_cap`` | ``budget_exceeded`` | the episode's decision cap (``max_decisions``) |
| ``trace_exhausted`` | ``trace_exhausted`` | the (noisy) trace agent had no decision left: its reference trace ends before the task (the replies were well formed; there was nothing left to reply) |
| ``no_action``, the idle decisions include a text answer | ``textual_hallucination`` | the agent answered in text (claiming work it did not do) where an action was needed |
| ``no_action``, every idle decision a ``trace_exhausted`` error | ``trace_exhausted`` | as above, in a record whose loop did not end the episode at once |
| ``no_action``, every idle decision unusable | ``invalid_format`` | the replies could not be parsed (malformed output, an error candidate) or were empty |
| ``no_action`` without its record | ``non_physical_exceeded`` | 3 decisions in a row without a tool call on an action stage |
| ``judge_unavailable`` | ``judge_failure`` | the judge gave no verdict |
| ``judge_error`` | ``judge_failure`` | the judge answered, but no verdict could be read from its replies |
| ``error`` (or anything unknown) | ``env_failure`` | the engine or simulator raised |
| (trials lost 3 times to an agent/judge outage) | ``infrastructure_failure`` | counted by ``magma bench run`` |

``no_action`` ends an episode after 3 decisions in a row without a tool call on an action
stage (the run loop's ``max_idle_decisions``); those "idle" decisions are read from the
episode's record (:func:`idle_status`). A single malformed reply does not end an episode: it
is a per-decision error (the agent gets the failure as feedback) and the episode goes on.
"""

from __future__ import annotations

from magma_core.json_types import JSONDict

TAXONOMY = (
    "success", "invalid_format", "textual_hallucination", "non_requested_action",
    "non_physical_exceeded", "judge_failure", "env_failure", "budget_exceeded",
    "infrastructure_failure", "trace_exhausted",
)
STATUS_MAP = {
    "success": "success",
    "failed": "non_requested_action",
    "exceeded": "budget_exceeded",
    "decision_cap": "budget_exceeded",
    "trace_exhausted": "trace_exhausted",
    "no_action": "non_physical_exceeded",
    "judge_unavailable": "judge_failure",
    "judge_error": "judge_failure",
    "error": "env_failure",
}
NO_ACTION = "no_action"
INFRASTRUCTURE_FAILURE = "infrastructure_failure"
INVALID_FORMAT = "invalid_format"
TEXTUAL_HALLUCINATION = "textual_hallucination"
TRACE_EXHAUSTED = "trace_exhausted"


def idle_decisions(record: JSONDict) -> list[JSONDict]:
    """The decisions (``decision`` of each step) of the record's last run of decisions
    without a tool call on action stages: those that ended a ``no_action`` episode."""
    stages = record.get("stages", [])
    out: list[JSONDict] = []
    for step in reversed(record.get("steps", [])):
        index = step.get("stage_index")
        text_only = bool(stages[index].get("text_only")) if isinstance(index, int) and 0 <= index < len(stages) else False
        decision = step.get("decision") or {}
        if text_only or decision.get("tool_calls"):
            break
        out.append(decision)
    return out[::-1]


def idle_status(record: JSONDict) -> str | None:
    """``textual_hallucination`` when an idle decision is a text answer, ``trace_exhausted``
    when every one was a trace agent's "no decision left", ``invalid_format`` when every one
    was unusable (a malformed reply, an agent error, or empty); None when the record shows no
    idle decision."""
    decisions = idle_decisions(record)
    if not decisions:
        return None
    if any(d.get("error") is None and str(d.get("say") or "").strip() for d in decisions):
        return TEXTUAL_HALLUCINATION
    if all(_exhausted(d) for d in decisions):
        return TRACE_EXHAUSTED
    return INVALID_FORMAT


def _exhausted(decision: JSONDict) -> bool:
    """Whether a stored decision is a trace agent's ``trace_exhausted`` error (the engine
    stores it as "the agent gave no decision (trace_exhausted): ...")."""
    error = decision.get("error")
    if isinstance(error, dict):
        return error.get("code") == TRACE_EXHAUSTED
    return isinstance(error, str) and error.startswith(f"the agent gave no decision ({TRACE_EXHAUSTED})")


def terminal_status(status: str, record: JSONDict | None = None) -> str:
    """The predecessor's name for our terminal ``status``; ``record`` (the episode's stored
    record) tells ``no_action`` episodes apart (see the table above)."""
    if status == NO_ACTION and record is not None:
        return idle_status(record) or STATUS_MAP[NO_ACTION]
    return STATUS_MAP.get(status, "env_failure")
