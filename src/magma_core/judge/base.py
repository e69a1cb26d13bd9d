"""The judge interface and its result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

EMPTY_ANSWER_REASON = "The judge rejected the empty text-only answer."


@dataclass
class Verdict:
    """The outcome of judging one answer.

    ``ok`` says whether the answer satisfies the rule, ``reason`` why. ``error`` is set
    when no verdict could be obtained (then ``ok`` is False and ``reason`` says so).
    ``raw_output`` is the judge's last reply; ``usage`` (token counts) and ``latency_s`` sum
    over the ``attempts`` made.
    """

    ok: bool
    reason: str = ""
    raw_output: str = ""
    error: str | None = None
    attempts: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0


@runtime_checkable
class Judge(Protocol):
    """Decides whether ``answer`` to ``question`` satisfies ``rule``. Never raises for a bad
    judge reply: that is a failed :class:`Verdict` with ``error`` set."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict: ...


class AcceptAllJudge:
    """Accepts every non-empty answer without asking a model (``--no-judge``)."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        if not answer.strip():
            return Verdict(ok=False, reason=EMPTY_ANSWER_REASON)
        return Verdict(ok=True, reason="accepted without a judge model")
