"""What each episode (or generation tree) of a target runs: its task and its vocabulary.

A target is a preset (one ``BaseTask`` for every episode) or a ``TaskDefinition`` (the
episode's seed generates its task). With ``randomized=True`` each episode also gets a public
vocabulary drawn with its seed from the task's randomization YAML; the mapping is kept in the
generated task's spec and in the episode record. Runs, generations and exports all ask
:class:`EpisodeTasks`, so a seed means the same task everywhere.
"""

from __future__ import annotations

from typing import Any

from magma_core.agents.user_simulation import user_from_spec, with_simulated_user
from magma_core.simulation.randomizer import RandomizationSpec, RuntimeRandomizer, SpecGenerator
from magma_core.simulation.tasks import BaseTask, GeneratedTask, TaskDefinition


class EpisodeTasks:
    """The task and vocabulary of each episode seed (deterministic: same seed, same pair)."""

    def __init__(self, target: BaseTask | TaskDefinition, randomized: bool = False,
                 skills: list[type] | None = None, user: str | None = None) -> None:
        if not isinstance(target, (BaseTask, TaskDefinition)):
            raise TypeError(f"a run target is a BaseTask or a TaskDefinition, got {type(target).__name__}")
        self.target = target
        self.randomized = randomized
        self.skills = skills  # the run's skills when not the task's own (vocabularies cover them)
        self.user = user  # a simulated user's spec (magma_core.agents.user_simulation), or None
        self._user: Any = None
        if randomized and not getattr(target, "randomized_config_path", ""):
            raise ValueError(f"{target.name} has no randomized_config_path: it cannot run --randomized")

    @property
    def is_definition(self) -> bool:
        return isinstance(self.target, TaskDefinition)

    def seed_of(self, base_seed: int, episode: int) -> int:
        """The seed of episode ``episode`` (``base_seed + episode``; a subclass may differ)."""
        return base_seed + episode

    def task_of(self, episode: int, seed: int) -> BaseTask:
        """The task of episode ``episode`` with ``seed`` (by default: :meth:`task` of the seed)."""
        return self.task(seed)

    def task(self, seed: int) -> BaseTask:
        """The episode's task (for a definition: generated with ``seed``, randomized if asked)."""
        if not self.is_definition:
            return self._simulated(self.target, seed)  # type: ignore[arg-type]
        task = self.target.generate(seed)  # type: ignore[union-attr]
        if self.randomized:
            spec = SpecGenerator(seed).generate_random_spec(task, skills=self.skills)
            task = task.with_randomization(spec.to_dict())
        return self._simulated(task, seed)

    def _simulated(self, task: BaseTask, seed: int) -> BaseTask:
        """``task`` with its user instructions in the simulated user's words (the same seed,
        the same words), or ``task`` itself without a user."""
        if self.user is None:
            return task
        if self._user is None:
            self._user = user_from_spec(self.user)
        return with_simulated_user(task, self._user, seed)

    def randomization(self, task: BaseTask, seed: int) -> RuntimeRandomizer | None:
        """The episode's randomization (the public names its agent sees): the generated task's
        stored mapping, or one drawn with ``seed`` for a preset; None when the run is not
        randomized."""
        if not self.randomized:
            return None
        mapping = task.randomization if isinstance(task, GeneratedTask) else None
        if mapping is None:
            mapping = SpecGenerator(seed).generate_random_spec(task, skills=self.skills).to_dict()
        return RuntimeRandomizer(RandomizationSpec.from_dict(mapping))

    #: Deprecated alias of :meth:`randomization` (the name before issue 39).
    vocabulary = randomization
