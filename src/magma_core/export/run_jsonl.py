"""Exports read from the run store: JSON Lines of whole episodes, or of decision steps.

``steps`` rows (one per decision: the input the agent saw, its decision, what the calls did)
are the raw material for training data. Episodes run with randomized names are
exported as the agent saw them: the record's mapping (``randomization``) translates the
engine's canonical names back to the public ones. A steps row's ``agent`` field holds that
decision's tokens, attempts, time and exact model exchanges (request and raw reply).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from magma_core.json_types import JSONDict
from magma_core.simulation.executor.records import ViewMessage
from magma_core.simulation.executor.vocabulary import public_feedback
from magma_core.simulation.randomizer import RandomizationSpec, RuntimeRandomizer
from magma_core.store import RunStore

#: Reasons the public-names seam gives for refused calls: such calls are exported as sent.
REFUSAL = re.compile(r"^`.*` (was not detected|were not detected|is not a known tool|are not "
                     r"valid arguments)|^Arguments for `.*` must be a dict")

KINDS = ("episodes", "steps")


def episode_rows(store: RunStore, run_name: str) -> Iterator[JSONDict]:
    """Each stored episode record, with the run name and episode index."""
    for summary in store.episodes(run_name):
        record = store.episode_record(run_name, summary.episode) or {}
        yield {"run": run_name, "episode": summary.episode, **record}


def agent_step(record: JSONDict, step_index: Any) -> JSONDict | None:
    """What the record keeps about the agent for step ``step_index`` (its decision number is
    ``step_index + 1``), or None."""
    per_decision = (record.get("agent") or {}).get("per_decision") or []
    for entry in per_decision:
        if isinstance(entry, dict) and isinstance(step_index, int) and entry.get("decision") == step_index + 1:
            return entry
    return None


def step_rows(store: RunStore, run_name: str) -> Iterator[JSONDict]:
    """One row per decision of every stored episode (in the agent's vocabulary)."""
    for episode in episode_rows(store, run_name):
        mapping = episode.get("randomization")
        vocabulary = RuntimeRandomizer(RandomizationSpec.from_dict(mapping)) if mapping else None
        for step in episode.get("steps", []):
            if vocabulary is not None:
                step = public_step(vocabulary, step)
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
                "agent": agent_step(episode, step.get("step_index")),
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


def public_step(vocabulary: RuntimeRandomizer, step: JSONDict) -> JSONDict:
    """A stored step as the agent saw it: inputs, decision and calls in public names (calls
    the vocabulary refused stay as the agent sent them)."""
    inputs = []
    for message in step.get("inputs", []):
        content = message.get("content", "")
        if message.get("kind") == "user":
            content = vocabulary.to_public_text(content)
        else:
            try:
                status = json.loads(content) if content else None
            except json.JSONDecodeError:
                status = None
            content = (json.dumps(public_feedback(vocabulary, status), default=str)
                       if isinstance(status, dict) else vocabulary.to_public_status(content))
        inputs.append(ViewMessage(message.get("kind", "env"), content).to_dict())
    calls = step.get("calls", [])
    refused = {i for i, c in enumerate(calls) if REFUSAL.match(str(c.get("message") or ""))}
    decision = dict(step.get("decision", {}))
    public_calls = []
    for index, call in enumerate(decision.get("tool_calls", [])):
        if index not in refused and isinstance(call.get("arguments"), dict):
            name, arguments = vocabulary.to_public_call(call["name"], call["arguments"])
            call = {**call, "name": name, "arguments": arguments}
        public_calls.append(call)
    decision["tool_calls"] = public_calls
    if isinstance(decision.get("say"), str):
        decision["say"] = vocabulary.to_public_text(decision["say"])
    outcomes = []
    for index, call in enumerate(calls):
        if index not in refused:
            tool, arguments = vocabulary.to_public_call(call.get("tool", ""), call.get("arguments") or {})
            call = {**call, "tool": tool, "arguments": arguments,
                    "message": vocabulary.to_public_status(str(call.get("message") or ""))}
        outcomes.append(call)
    return {**step, "inputs": inputs, "decision": decision, "calls": outcomes}
