"""Leak checks for held-out splits: does a frozen suite ask for anything the training data holds?

An experiment that claims a model got better must evaluate on items its training rows could
not have shown it. Two counts per split, both by code:

- **verbatim instructions**: every user-facing text of an item (each stage's instruction and
  the reference trace's user turns, after its condition's transform) looked up among the user
  turns of the training rows;
- **combinations**: what each request of an item combines (``BaseRequest.combination``: for
  sorting's ``SortCube`` the cube, the zone and the instruction template), looked up among the
  combinations the training definitions produce over the training seeds.

A *compositional* split must have 0 of both: ``refuse_leaks`` raises a ``UserError`` naming
what leaked. The other splits report their counts (a perturbed split shares combinations with
training on purpose; what differs there is the condition).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.bench.task_spec import task_to_spec
from magma_core.serialization import load_type
from magma_core.simulation.tasks import TaskDefinition
from magma_core.user_error import UserError

Combination = tuple[str, ...]


@dataclass(frozen=True)
class SplitOverlap:
    """What one held-out split shares with the training data."""

    split: str
    items: int
    instructions: int
    verbatim_in_training: int
    combinations: int
    overlapping_combinations: int
    leaked: tuple[str, ...] = field(default=())

    @property
    def leaks(self) -> bool:
        return bool(self.verbatim_in_training or self.overlapping_combinations)

    def line(self) -> str:
        return (f"{self.split}: {self.items} items, {self.verbatim_in_training} of "
                f"{self.instructions} instructions verbatim in the training rows, "
                f"{self.overlapping_combinations} of {self.combinations} combinations "
                f"produced by the training definitions")


def _request_of(definition: type | TaskDefinition, request_type: str) -> Any | None:
    for request in getattr(definition, "active_requests", None) or []:
        if request.get_request_type() == request_type:
            return request
    return None


def spec_combinations(task: Mapping[str, Any]) -> set[Combination]:
    """The combinations of a task spec's requests (those whose request says one)."""
    if not task.get("definition"):
        return set()
    definition = load_type(task["definition"])
    found: set[Combination] = set()
    for record in task.get("requests") or []:
        request = _request_of(definition, record["request_type"])
        combination = request.combination(record["parameters"]) if request is not None else None
        if combination is not None:
            found.add(tuple(str(part) for part in combination))
    return found


def spec_instructions(task: Mapping[str, Any]) -> set[str]:
    """Every user-facing text of a task spec: stage instructions and the trace's user turns."""
    texts = {entry["spec"]["arguments"].get("instruction") for entry in task.get("stages") or []
             if isinstance(entry.get("spec", {}).get("arguments"), dict)}
    events = (task.get("perfect_trace") or {}).get("events", [])
    texts |= {e.get("content") for e in events if e.get("type") == "user"}
    return {t.strip() for t in texts if isinstance(t, str) and t.strip()}


def definition_combinations(definition: TaskDefinition, seeds: Iterable[int]) -> set[Combination]:
    """The combinations ``definition`` produces over ``seeds`` (no simulator involved)."""
    found: set[Combination] = set()
    for seed in seeds:
        found |= spec_combinations(task_to_spec(definition.generate(seed)))
    return found


def row_instructions(rows: Iterable[Mapping[str, Any]]) -> set[str]:
    """The user turns of chat rows (the ``chat-jsonl`` export's ``messages``)."""
    texts: set[str] = set()
    for row in rows:
        for message in row.get("messages") or []:
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                texts.add(message["content"].strip())
    return texts


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file (one JSON object a line; blank lines skipped)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def check_split(split: str, items: list[Mapping[str, Any]], training_texts: set[str],
                training_combinations: set[Combination]) -> SplitOverlap:
    """The overlap of one split's items with the training texts and combinations."""
    instructions: set[str] = set()
    combinations: set[Combination] = set()
    for item in items:
        instructions |= spec_instructions(item["task"])
        combinations |= spec_combinations(item["task"])
    verbatim = sorted(instructions & training_texts)
    shared = sorted(combinations & training_combinations)
    leaked = tuple(verbatim[:3]) + tuple("/".join(c) for c in shared[:3])
    return SplitOverlap(split, len(items), len(instructions), len(verbatim), len(combinations),
                        len(shared), leaked)


def refuse_leaks(overlaps: Iterable[SplitOverlap], strict: Iterable[str]) -> None:
    """Raise a ``UserError`` if a split named in ``strict`` shares anything with training."""
    strict = set(strict)
    leaking = [o for o in overlaps if o.split in strict and o.leaks]
    if leaking:
        raise UserError("held-out split leaks into training: " + "; ".join(
            f"{o.line()} (e.g. {', '.join(o.leaked)})" for o in leaking))
