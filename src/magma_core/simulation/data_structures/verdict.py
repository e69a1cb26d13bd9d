"""``Judge`` and ``Verdict``: the one definition of what validates a text-only (JUDGE) answer.

The engine calls ``judge.judge(rule, question, answer) -> Verdict`` for JUDGE stages;
``magma_core.judge`` holds the implementations (a model judge, an accept-all judge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass
class Verdict:
    """The outcome of judging one answer.

    ``ok`` says whether the answer satisfies the rule, ``reason`` why. ``error`` is set
    when no verdict could be obtained (then ``ok`` is False and ``reason`` says so; the
    engine treats it as an outage of the judge, not as the agent's failure).
    ``unparsable``: the judge answered, but no verdict could be read from its replies (the
    engine records a judge error on that episode and the run goes on; without it an
    ``error`` is an outage, and the run stops resumably). ``raw_output`` is the judge's last reply; ``usage`` (token counts) and ``latency_s`` sum
    over the ``attempts`` made.
    """

    ok: bool
    reason: str = ""
    raw_output: str = ""
    error: str | None = None
    attempts: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    unparsable: bool = False


@runtime_checkable
class Judge(Protocol):
    """Decides whether ``answer`` to ``question`` satisfies ``rule``. Never raises for a bad
    judge reply: that is a failed :class:`Verdict` with ``error`` set."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict: ...
