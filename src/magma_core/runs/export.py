"""Exports read from the run store: JSON Lines of whole episodes, or of decision steps.

``steps`` rows (one per decision: the input the agent saw, its decision, what the calls did)
are the raw material for training data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

from magma_core.store import RunStore

KINDS = ("episodes", "steps")


def episode_rows(store: RunStore, run_name: str) -> Iterator[dict[str, Any]]:
    """Each stored episode record, with the run name and episode index."""
    for summary in store.episodes(run_name):
        record = store.episode_record(run_name, summary.episode) or {}
        yield {"run": run_name, "episode": summary.episode, **record}


def step_rows(store: RunStore, run_name: str) -> Iterator[dict[str, Any]]:
    """One row per decision of every stored episode."""
    for episode in episode_rows(store, run_name):
        for step in episode.get("steps", []):
            yield {
                "run": run_name,
                "episode": episode["episode"],
                "task": episode.get("task"),
                "seed": episode.get("seed"),
                "episode_status": episode.get("status"),
                "step": step.get("step_index"),
                "stage": step.get("stage_index"),
                "inputs": step.get("inputs", []),
                "decision": step.get("decision", {}),
                "calls": [
                    {k: c.get(k) for k in ("robot", "tool", "arguments", "ok", "message", "failure_flag")}
                    for c in step.get("calls", [])
                ],
                "stage_success": step.get("stage_success"),
                "stage_state": step.get("stage_state"),
            }


def export_jsonl(store: RunStore, run_name: str, kind: str, out: TextIO) -> int:
    """Write ``kind`` rows of ``run_name`` as JSON Lines to ``out``; return the row count."""
    if kind not in KINDS:
        raise ValueError(f"unknown export kind {kind!r}: use one of {', '.join(KINDS)}")
    rows = episode_rows(store, run_name) if kind == "episodes" else step_rows(store, run_name)
    count = 0
    for row in rows:
        out.write(json.dumps(row, default=str) + "\n")
        count += 1
    return count
