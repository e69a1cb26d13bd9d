"""Rewards from the engine's verdicts: the default formula, and user functions over a record.

The default reward of a finished rollout (:class:`Reward`, weights as its fields)::

    R = success * [status == "success"]
      + progress * stages_passed / stages_total
      + optimal * optimal_stages / stages_total
      - cost_per_call * tool_calls

``status``, ``stages_passed``, ``optimal_stages`` (stages finished within their target tool
calls, the engine's OPTIMAL state) and ``tool_calls`` are those of the episode record, read from
the engine's verdicts and counters only; ``stages_total`` counts the stages the engine runs
(answer flags included). Defaults: success 1.0, progress 0.5, optimal 0.25, cost_per_call 0.01:
a perfect run of a one-stage task with 2 calls and an answer scores
1 + 0.5 * 2/2 + 0.25 * 2/2 - 0.02 = 1.73.

A user reward is any ``fn(record: dict) -> float`` over the episode record (the dict the run
store keeps: ``status``, ``stages``, ``steps``, ``stage_states``, ``tool_calls``, ...; plus
``rl``: the rollout's group, index and start digest). Its value replaces the default.

Rewards are terminal: a step's reward is 0.0 until the step that ends the rollout, which
carries the whole episode's reward (what GRPO-style trainers score a rollout with).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from magma_core.user_error import UserError

RewardFn = Callable[[dict[str, Any]], float]


@dataclass(frozen=True)
class Reward:
    """The default reward's weights (see the module doc for the formula)."""

    success: float = 1.0
    progress: float = 0.5
    optimal: float = 0.25
    cost_per_call: float = 0.01

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise UserError(f"reward weight {name} must be a finite number, got {value!r}")

    def terms(self, record: dict[str, Any]) -> dict[str, float]:
        """Each term of the formula for ``record`` (an episode record dict), and ``total``."""
        total_stages = int(record.get("num_stages") or len(record.get("stages") or []))
        passed = int(record.get("stages_passed") or 0)
        optimal = int((record.get("stage_states") or {}).get("OPTIMAL") or 0)
        calls = int(record.get("tool_calls") or 0)
        share = (lambda n: n / total_stages) if total_stages else (lambda n: 0.0)
        terms = {
            "success": self.success * float(record.get("status") == "success"),
            "progress": self.progress * share(passed),
            "optimal": self.optimal * share(optimal),
            "cost": -self.cost_per_call * calls,
        }
        terms["total"] = sum(terms.values())
        return terms

    def __call__(self, record: dict[str, Any]) -> float:
        return self.terms(record)["total"]


def score(reward: Reward | RewardFn, record: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """``(reward, terms)`` of ``record``: the default's terms, or a user function's value
    (which must be a finite number: anything else is a ``ValueError`` naming it)."""
    if isinstance(reward, Reward):
        terms = reward.terms(record)
        return terms["total"], terms
    value = reward(record)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        name = getattr(reward, "__name__", type(reward).__name__)
        raise ValueError(f"reward function {name} returned {value!r}, not a finite number")
    return float(value), {"total": float(value), "function": getattr(reward, "__name__", "reward")}
