"""From an engine ``EpisodeRecord`` (typed) to the run store's summary row and normalised rows."""

from __future__ import annotations

import json

from magma_core.json_types import JSONDict
from magma_core.simulation.executor.records import EpisodeRecord
from magma_core.store.run_store import EpisodeRows, EpisodeSummary


def episode_summary(
    episode: int, seed: int, record: EpisodeRecord, agent: JSONDict
) -> EpisodeSummary:
    """The table row of a finished episode; ``agent`` holds the agent's totals
    (``total_tokens``, ``latency_s``)."""
    states = record.stage_state_counts()
    return EpisodeSummary(
        episode=episode,
        seed=seed,
        status=record.status,
        stages_total=len(record.stages),
        stages_passed=record.stages_passed,
        optimal=states["OPTIMAL"],
        acceptable=states["ACCEPTABLE"],
        exceeded=states["EXCEEDED"],
        tool_calls=record.tool_calls,
        decisions=len(record.steps),
        wall_s=float(record.wall_s),
        total_tokens=int(agent["total_tokens"]),
        agent_latency_s=float(agent["latency_s"]),
        reason="" if record.status == "success" else str(record.reason or ""),
    )


def episode_rows(record: EpisodeRecord) -> EpisodeRows:
    """Decisions, tool calls, stage outcomes and world states of a record, as run-store rows."""
    decisions, calls, stages = [], [], []
    for step in record.steps:
        instruction = "\n".join(message.content for message in step.inputs)
        decisions.append(
            (step.step_index, step.stage_index, instruction, step.decision.say, step.status)
        )
        for position, call in enumerate(step.calls):
            calls.append(
                (
                    step.step_index,
                    position,
                    call.robot,
                    call.tool,
                    json.dumps(call.to_dict()["arguments"], sort_keys=True),
                    int(bool(call.ok)),
                    call.message,
                    str(call.failure_flag.value),
                )
            )
    for stage in record.stages:
        if stage.started or stage.success is not None:
            stages.append(
                (stage.index, stage.success or "ONGOING", stage.state, stage.tool_calls,
                 stage.forgiven_tool_calls)
            )
    return EpisodeRows(
        decisions=decisions, tool_calls=calls, stage_outcomes=stages, world=record.world_dict()
    )
