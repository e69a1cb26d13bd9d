"""Task sources: the tasks, seeds and starting situations a trainer's groups draw from.

A :class:`TaskSource` is a list of :class:`TaskItem` s, each one group start: a task, the
seed its episode starts with, the public names its agent sees (None: canonical names) and,
optionally, a stored situation to start from instead of the task's first decision
(:class:`StoredStart`, see :mod:`magma_core.rl.starts`). Made from

- a preset or a task definition with seeds, as ``magma run`` runs them
  (:meth:`TaskSource.target`; ``randomized=True`` draws each seed's randomization),
- a frozen benchmark suite's items (:meth:`TaskSource.suite`: the items' frozen tasks),
- stored situations: generation nodes and failed benchmark trials
  (:func:`magma_core.rl.starts.generation_starts`, :func:`magma_core.rl.starts.bench_failure_starts`).

Every task of one source must share a world (simulator scene, tools, robots): one engine
runs them all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from magma_core.runs.assembly import load_task
from magma_core.scenarios import load_target, register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.randomizer import RuntimeRandomizer
from magma_core.simulation.tasks import BaseTask, TaskDefinition, task_from_json
from magma_core.user_error import UserError


@dataclass(frozen=True)
class StoredStart:
    """A stored situation a group starts from, instead of its task's first decision.

    ``snapshot``: a whole-slot snapshot (bytes, as the generation store keeps them), restored
    as it is. ``replay``: decisions (engine ``Decision`` / ``DecisionError``) replayed from the
    task's seed to reach the situation, with the statuses the store recorded for them
    (``expected``, checked). ``memory``: the agent memory at that point (a chat ``history``
    in it opens the conversation).
    """

    origin: str  # where it was stored, e.g. "generation gen-1 situation 4"
    snapshot: bytes | None = None
    replay: tuple[Any, ...] = ()
    expected: tuple[str, ...] = ()
    memory: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskItem:
    """One group start: ``task`` from ``seed``, seen through its ``randomization`` (the public
    names its agent sees; None: canonical names); ``start``: a stored
    situation (None: the episode's beginning); ``meta``: where the item came from."""

    id: str
    task: BaseTask
    seed: int
    randomization: RuntimeRandomizer | None = None
    start: StoredStart | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def vocabulary(self) -> RuntimeRandomizer | None:
        """Deprecated alias of :attr:`randomization` (the name before issue 39)."""
        return self.randomization


class TaskSource(Sequence[TaskItem]):
    """The items of one training source (``name`` is stored with its rollouts)."""

    def __init__(self, name: str, items: Iterable[TaskItem]) -> None:
        self.name = name
        self.items = list(items)
        if not self.items:
            raise UserError(f"task source {name} has no items")
        ids = [item.id for item in self.items]
        if len(set(ids)) != len(ids):
            raise UserError(f"task source {name} has duplicate item ids")
        self._by_id = {item.id: item for item in self.items}

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return self._by_id[key]
            except KeyError:
                raise UserError(f"task source {self.name} has no item {key!r}") from None
        return self.items[key]

    def __iter__(self) -> Iterator[TaskItem]:
        return iter(self.items)

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]

    # -- constructors ------------------------------------------------------------------------
    @classmethod
    def target(cls, target: str, seeds: Iterable[int] = (0,), *, randomized: bool = False) -> TaskSource:
        """A preset's or a definition's episodes with ``seeds`` (``scenario.Name``), as
        ``magma run TARGET --seed S`` starts them; with ``randomized`` each seed also draws the
        public names its agent sees."""
        target_cls = load_target(target)
        try:
            instance = target_cls() if issubclass(target_cls, TaskDefinition) else load_task(target)
            episodes = EpisodeTasks(instance, randomized=randomized)
        except (TypeError, ValueError) as exc:
            raise UserError(f"{target}: {exc}") from None
        items = []
        for seed in _seeds(seeds):
            try:
                task = episodes.task(seed)
            except (TypeError, ValueError) as exc:
                raise UserError(f"{target} cannot make the task of seed {seed}: {exc}") from None
            items.append(TaskItem(f"{target}@{seed}", task, seed, episodes.randomization(task, seed),
                                  meta={"target": target, "seed": seed, "randomized": randomized}))
        return cls(target, items)

    @classmethod
    def suite(cls, suite: Any, item_ids: Iterable[str] | None = None,
              seeds: Iterable[int] = (0,)) -> TaskSource:
        """A compiled benchmark suite's items (``suite``: what
        ``magma_core.bench.suite.load_suite`` returned, checked against its manifest), each
        with ``seeds``; ``item_ids`` picks some (default: all)."""
        items_by_id = {item["item_id"]: item for item in suite.items}
        wanted = list(items_by_id) if item_ids is None else list(item_ids)
        out = []
        for item_id in wanted:
            item = items_by_id.get(item_id)
            if item is None:
                raise UserError(f"suite {suite.name} has no item {item_id!r}")
            task = suite_task(item)
            for seed in _seeds(seeds):
                out.append(TaskItem(f"{item_id}@{seed}", task, seed, meta={
                    "suite": suite.name, "fingerprint": suite.fingerprint, "item_id": item_id,
                    "condition": item.get("condition"), "seed": seed}))
        return cls(f"suite.{suite.name}", out)


def suite_task(item: dict[str, Any]) -> BaseTask:
    """The frozen task of a suite item (its scenario's environments registered)."""
    try:
        register_environments(str(item["scenario"]).split(".")[0])
        return task_from_json(json.dumps(item["task"]))
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"item {item.get('item_id')}: its task cannot be loaded: {exc}") from None


def _seeds(seeds: Iterable[int]) -> list[int]:
    out = list(seeds)
    if not out or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in out):
        raise UserError(f"seeds must be integers >= 0, got {out!r}")
    return out
