"""The accept-all judge; ``Judge`` and ``Verdict`` themselves are defined once, in
``magma_core.simulation.data_structures.verdict`` (the engine needs them too)."""

from __future__ import annotations

from magma_core.simulation.data_structures.verdict import Judge, Verdict

EMPTY_ANSWER_REASON = "The judge rejected the empty text-only answer."

__all__ = ["EMPTY_ANSWER_REASON", "AcceptAllJudge", "Judge", "Verdict"]


class AcceptAllJudge:
    """Accepts every non-empty answer without asking a model (``--judge none``)."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        if not answer.strip():
            return Verdict(ok=False, reason=EMPTY_ANSWER_REASON)
        return Verdict(ok=True, reason="accepted without a judge model")
