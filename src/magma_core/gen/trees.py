"""What each tree of a generation runs: its seed's task, and the vocabulary its agent sees.

A preset's trees all run the preset. A definition's tree *t* runs the task its seed
``seed + t`` generates (``TaskDefinition.generate``), so trees differ. With ``randomized``
each tree's agent also sees a public vocabulary drawn with the tree's seed, as the episodes of
``magma run --randomized`` do (:class:`magma_core.scenarios.episode_tasks.EpisodeTasks` decides
both, for runs and generations alike). The store keeps both per tree (the task as
``task_to_json``, the vocabulary as its mapping): a resumed generation and its export see
exactly what the tree ran, even if the definition changed since.

The trace or noisy-trace agent of such generations is
:class:`magma_core.agents.trace_per_task.TreeTraceAgent`: each tree replays its own task's
reference trace, in the tree's vocabulary.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.randomizer import RandomizationSpec, RuntimeRandomizer
from magma_core.simulation.tasks import BaseTask, GeneratedTask
from magma_core.simulation.tasks.generated import task_from_json, task_to_json


@dataclass
class TreeTask:
    """The task a tree runs (``seed`` is the tree's) and its agent's vocabulary (None:
    canonical names)."""

    seed: int
    task: BaseTask
    vocabulary: RuntimeRandomizer | None = None

    def stored_task(self) -> str | None:
        """The task as the store keeps it (a generated task's JSON; None for a preset)."""
        return task_to_json(self.task, indent=None) if isinstance(self.task, GeneratedTask) else None

    def stored_vocabulary(self) -> str | None:
        """The vocabulary's mapping as JSON (None when the tree is not randomised)."""
        return None if self.vocabulary is None else json.dumps(self.vocabulary.spec.to_dict(), sort_keys=True)

    def reference_trace(self) -> Any:
        """The task's reference trace in the tree's vocabulary (None when it has none)."""
        trace = self.task.perfect_trace()
        if trace is not None and self.vocabulary is not None:
            trace = self.vocabulary.to_public_trace(trace)
        return trace


class TreeTasks:
    """Makes and reloads the :class:`TreeTask` of each tree of a generation of ``target``.

    ``task``: the preset (for a definition, any task of it: the one the engine was built on);
    ``episode_tasks``: a definition's or a randomised generation's (None: every tree runs
    ``task`` in canonical names).
    """

    def __init__(self, task: BaseTask, episode_tasks: EpisodeTasks | None = None) -> None:
        self.task = task
        self.episode_tasks = episode_tasks

    @property
    def randomized(self) -> bool:
        return self.episode_tasks is not None and self.episode_tasks.randomized

    @property
    def per_tree(self) -> bool:
        """Whether trees may run different tasks or vocabularies."""
        return self.episode_tasks is not None

    def new(self, seed: int) -> TreeTask:
        """The task and vocabulary of a new tree with ``seed``."""
        if self.episode_tasks is None:
            return TreeTask(seed, self.task)
        task = self.episode_tasks.task(seed)
        return TreeTask(seed, task, self.episode_tasks.vocabulary(task, seed))

    def load(self, seed: int, task_json: str | None, vocabulary_json: str | None) -> TreeTask:
        """A stored tree's task and vocabulary (as :meth:`TreeTask.stored_task` and
        :meth:`TreeTask.stored_vocabulary` wrote them)."""
        task = self.task if task_json is None else task_from_json(task_json)
        vocabulary = None
        if vocabulary_json is not None:
            vocabulary = RuntimeRandomizer(RandomizationSpec.from_dict(json.loads(vocabulary_json)))
        return TreeTask(seed, task, vocabulary)
