"""Our terminal statuses on the predecessor's taxonomy (gen-bench-spec §2).

| ours (engine / run loop) | predecessor | why |
| --- | --- | --- |
| ``success`` | ``success`` | every stage verified |
| ``failed`` | ``non_requested_action`` | a stage's verification failed: the agent did something other than what was asked (a say on an action stage included: ``textual_hallucination`` is not told apart) |
| ``exceeded`` | ``budget_exceeded`` | a stage's tool-call budget ran out |
| ``decision_cap`` | ``budget_exceeded`` | the episode's decision cap (``max_decisions``) |
| ``no_action`` | ``non_physical_exceeded`` | 3 decisions in a row without a tool call on an action stage |
| ``judge_unavailable`` | ``judge_failure`` | the judge gave no verdict |
| ``error`` | ``env_failure`` | the engine or simulator raised |
| (trials lost 3 times to an agent/judge outage) | ``infrastructure_failure`` | counted by ``magma bench run`` |

Malformed agent output (``invalid_format`` in the predecessor) is a per-decision error here:
the episode goes on and ends in one of the statuses above.
"""

from __future__ import annotations

TAXONOMY = (
    "success", "invalid_format", "textual_hallucination", "non_requested_action",
    "non_physical_exceeded", "judge_failure", "env_failure", "budget_exceeded",
    "infrastructure_failure",
)
STATUS_MAP = {
    "success": "success",
    "failed": "non_requested_action",
    "exceeded": "budget_exceeded",
    "decision_cap": "budget_exceeded",
    "no_action": "non_physical_exceeded",
    "judge_unavailable": "judge_failure",
    "error": "env_failure",
}
INFRASTRUCTURE_FAILURE = "infrastructure_failure"


def terminal_status(status: str) -> str:
    """The predecessor's name for our terminal ``status`` (``env_failure`` when unknown)."""
    return STATUS_MAP.get(status, "env_failure")
