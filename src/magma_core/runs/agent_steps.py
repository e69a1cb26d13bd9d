"""What the run keeps about the agent for each decision: tokens, attempts, time, and the exact
model exchanges (request and raw reply), read from the internal steps of the agent's output.

Stored per decision in the episode record (``record["agent"]["per_decision"]``, the n-th
entry for step n-1), shown by ``magma runs show --episode K --step N`` and exported with each
step row. A decision's ``latency_s`` is the time its slot waited for the answer, from the
first time the input was asked (resent attempts included).
"""

from __future__ import annotations

from typing import Any

TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
#: what a model exchange keeps from an agent's internal step
EXCHANGE_KEYS = ("id", "component", "request", "output_raw", "finish_reason", "usage", "latency_s",
                 "attempts", "attempt_log", "request_latency_s")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def exchange_of(internal_steps: list[dict[str, Any]]) -> dict[str, Any]:
    """One decision's agent figures from the internal steps of its (first) candidate: tokens,
    ``calls`` (model calls), ``attempts``, ``model_s`` and ``model_calls`` (the exchanges)."""
    out: dict[str, Any] = {key: 0 for key in TOKEN_KEYS}
    out.update(calls=0, attempts=0, model_s=0.0, model_calls=[])
    for step in internal_steps:
        if not isinstance(step, dict):
            continue
        usage = step.get("usage")
        if isinstance(usage, dict):
            out["calls"] += 1
            for key in TOKEN_KEYS:
                out[key] += int(_number(usage.get(key)))
        attempts = step.get("attempts")
        out["attempts"] += attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else 0
        out["model_s"] += _number(step.get("latency_s"))
        if "request" in step or "output_raw" in step or "attempt_log" in step:
            out["model_calls"].append({k: step[k] for k in EXCHANGE_KEYS if k in step})
    out["model_s"] = round(out["model_s"], 6)
    return out


def merge_exchanges(carried: list[dict[str, Any]], current: dict[str, Any]) -> dict[str, Any]:
    """``current`` with the exchanges of attempts that did not reach the agent before it
    (``carried``: the same input was sent again) counted in: their tokens, attempts, time and
    model calls come first."""
    if not carried:
        return current
    merged = dict(current)
    for earlier in carried:
        for key in (*TOKEN_KEYS, "calls", "attempts"):
            merged[key] = merged.get(key, 0) + earlier.get(key, 0)
        merged["model_s"] = round(merged.get("model_s", 0.0) + earlier.get("model_s", 0.0), 6)
        merged["wait_s"] = merged.get("wait_s", 0.0) + earlier.get("wait_s", 0.0)
    merged["model_calls"] = [c for e in carried for c in e.get("model_calls", [])] + current.get("model_calls", [])
    return merged
