"""Judges for text-only (JUDGE) stages: does an answer satisfy a rule?

The engine calls ``judge.judge(rule, question, answer) -> Verdict``. :class:`OpenAIJudge`
asks an OpenAI-compatible model for a JSON verdict; :class:`AcceptAllJudge` accepts every
non-empty answer (runs without a judge model). :func:`from_spec` builds one from
``none`` or ``openai:MODEL[@BASE_URL]``.
"""

from magma_core.judge.base import AcceptAllJudge, Judge, Verdict
from magma_core.judge.openai_judge import OpenAIJudge, from_spec

__all__ = ["AcceptAllJudge", "Judge", "OpenAIJudge", "Verdict", "from_spec"]
