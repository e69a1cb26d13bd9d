"""Leak checks for held-out splits: does a frozen suite ask for anything the training data holds?

An experiment that claims a model got better must evaluate on items its training rows could
not have shown it. Two counts per split, both by code:

- **verbatim instructions**: every user-facing text of an item (each stage's instruction and
  the reference trace's user turns, after its condition's transform) looked up among the user
  turns of the training rows;
- **combinations**: what each request of an item combines (``BaseRequest.combination``: for
  sorting's ``SortCube`` the cube, the zone and the instruction template), looked up among the
  combinations the training definitions produce over the training seeds.

A third count, given the training tasks: items that repeat a training task word for word (the
same user turns in the same order). A *compositional* split must have 0 of all three, and a
perturbed split 0 of the third: ``refuse_leaks`` raises a ``UserError`` naming what leaked. The
other splits report their counts (a longer-horizon split shares its words with training on
purpose: what is new there is the length of the chain).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.bench.task_spec import task_to_spec
from magma_core.json_types import JSONDict, JSONValue
from magma_core.serialization import load_type
from magma_core.simulation.tasks import TaskDefinition
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks.requests import BaseRequest

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
    #: items whose whole sequence of instructions is one a training task has (-1: not checked)
    tasks_in_training: int = -1

    @property
    def leaks(self) -> bool:
        return bool(self.verbatim_in_training or self.overlapping_combinations
                    or self.tasks_in_training > 0)

    def line(self) -> str:
        whole = (f", {self.tasks_in_training} of {self.items} items a training task word for word"
                 if self.tasks_in_training >= 0 else "")
        return (f"{self.split}: {self.items} items, {self.verbatim_in_training} of "
                f"{self.instructions} instructions verbatim in the training rows, "
                f"{self.overlapping_combinations} of {self.combinations} combinations "
                f"produced by the training definitions{whole}")


def _request_of(definition: type | TaskDefinition, request_type: str) -> BaseRequest | None:
    for request in getattr(definition, "active_requests", None) or []:
        if request.get_request_type() == request_type:
            return request
    return None


def spec_combinations(task: Mapping[str, JSONValue]) -> set[Combination]:
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


def spec_sequence(task: Mapping[str, JSONValue]) -> tuple[str, ...]:
    """The user turns of a task's reference trace, in order: what the agent is told, turn by
    turn (two tasks with the same sequence ask the same of the agent)."""
    events = (task.get("perfect_trace") or {}).get("events", [])
    return tuple(e["content"].strip() for e in events
                 if e.get("type") == "user" and isinstance(e.get("content"), str))


def spec_instructions(task: Mapping[str, JSONValue]) -> set[str]:
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


def row_instructions(rows: Iterable[Mapping[str, JSONValue]]) -> set[str]:
    """The user turns of chat rows (the ``chat-jsonl`` export's ``messages``)."""
    texts: set[str] = set()
    for row in rows:
        for message in row.get("messages") or []:
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                texts.add(message["content"].strip())
    return texts


def read_rows(path: str | Path) -> list[JSONDict]:
    """The rows of a JSONL file (one JSON object a line; blank lines skipped)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def check_split(split: str, items: list[Mapping[str, JSONValue]], training_texts: set[str],
                training_combinations: set[Combination],
                training_sequences: set[tuple[str, ...]] | None = None) -> SplitOverlap:
    """The overlap of one split's items with the training texts and combinations (and, given
    ``training_sequences``, how many items repeat a training task's instructions whole)."""
    instructions: set[str] = set()
    combinations: set[Combination] = set()
    for item in items:
        instructions |= spec_instructions(item["task"])
        combinations |= spec_combinations(item["task"])
    verbatim = sorted(instructions & training_texts)
    shared = sorted(combinations & training_combinations)
    leaked = tuple(verbatim[:3]) + tuple("/".join(c) for c in shared[:3])
    whole = -1 if training_sequences is None else sum(
        spec_sequence(item["task"]) in training_sequences for item in items)
    return SplitOverlap(split, len(items), len(instructions), len(verbatim), len(combinations),
                        len(shared), leaked, whole)


def refuse_leaks(overlaps: Iterable[SplitOverlap], strict: Iterable[str],
                 whole_tasks: Iterable[str] = ()) -> None:
    """Raise a ``UserError`` if a split named in ``strict`` shares anything with training, or
    one named in ``whole_tasks`` (or a condition of it: ``split/condition``) repeats a training
    task word for word."""
    strict, whole_tasks = set(strict), set(whole_tasks)
    leaking = [o for o in overlaps if (o.split in strict and o.leaks)
               or (o.split.split("/")[0] in whole_tasks and o.tasks_in_training > 0)]
    if leaking:
        raise UserError("held-out split leaks into training: " + "; ".join(
            f"{o.line()} (e.g. {', '.join(o.leaked) or 'whole tasks'})" for o in leaking))
