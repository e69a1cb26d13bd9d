"""From an engine ``EpisodeRecord`` dict to the run store's summary and normalised rows."""

from __future__ import annotations

import json
from typing import Any

from magma_core.store.run_store import EpisodeRows, EpisodeSummary


def episode_summary(episode: int, seed: int, record: dict[str, Any]) -> EpisodeSummary:
    """The table row of a finished episode."""
    states = record.get("stage_states", {})
    return EpisodeSummary(
        episode=episode,
        seed=seed,
        status=str(record.get("status", "error")),
        stages_total=int(record.get("num_stages", len(record.get("stages", [])))),
        stages_passed=int(record.get("stages_passed", 0)),
        optimal=int(states.get("OPTIMAL", 0)),
        acceptable=int(states.get("ACCEPTABLE", 0)),
        exceeded=int(states.get("EXCEEDED", 0)),
        tool_calls=int(record.get("tool_calls", 0)),
        decisions=len(record.get("steps", [])),
        wall_s=float(record.get("timings", {}).get("wall_s", 0.0)),
        total_tokens=int(record.get("agent", {}).get("total_tokens", 0)),
        agent_latency_s=float(record.get("agent", {}).get("latency_s", 0.0)),
    )


def episode_rows(record: dict[str, Any]) -> EpisodeRows:
    """Decisions, tool calls and stage outcomes of a record, as run-store rows."""
    decisions, calls, stages = [], [], []
    for step in record.get("steps", []):
        index = int(step.get("step_index", len(decisions)))
        inputs = step.get("inputs") or []
        instruction = "\n".join(str(m.get("content", "")) for m in inputs if isinstance(m, dict))
        decision = step.get("decision") or {}
        decisions.append(
            (index, step.get("stage_index"), instruction, decision.get("say", ""), step.get("status"))
        )
        for position, call in enumerate(step.get("calls", [])):
            calls.append(
                (
                    index,
                    position,
                    call.get("robot"),
                    str(call.get("tool", "")),
                    json.dumps(call.get("arguments", {}), default=str, sort_keys=True),
                    int(bool(call.get("ok"))),
                    call.get("message"),
                    str(call.get("failure_flag", "")),
                )
            )
    for stage in record.get("stages", []):
        if stage.get("started") or stage.get("success") is not None:
            stages.append(
                (
                    int(stage["index"]),
                    str(stage.get("success") or "ONGOING"),
                    stage.get("state"),
                    stage.get("tool_calls"),
                    stage.get("forgiven_tool_calls"),
                )
            )
    return EpisodeRows(decisions=decisions, tool_calls=calls, stage_outcomes=stages)
