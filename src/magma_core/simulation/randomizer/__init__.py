"""Name randomization: the agent sees public names, the engine runs canonical ones.

``SpecGenerator`` draws ``RandomizationSpec``s from a task's YAML (see ``config`` for the
schema); ``RuntimeRandomizer`` translates with one spec; ``Randomizer`` holds one random or
N indexed variations. Apply a stored mapping with
``RuntimeRandomizer(RandomizationSpec.from_dict(mapping))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magma_core.simulation.randomizer.config import check_config, load_config, resolve_config_path
from magma_core.simulation.randomizer.generator import SpecGenerator
from magma_core.simulation.randomizer.runtime import CanonicalNameError, RuntimeRandomizer
from magma_core.simulation.randomizer.spec import RandomizationSpec

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks.base_task import BaseTask
    from magma_core.simulation.tasks.generated import GeneratedTask

__all__ = [
    "CanonicalNameError",
    "RandomizationSpec",
    "Randomizer",
    "RuntimeRandomizer",
    "SpecGenerator",
    "check_config",
    "load_config",
    "randomize_task",
    "resolve_config_path",
]


class Randomizer:
    """``nb_variation`` vocabularies for a task: 1 random, or n indexed; delegates every other
    attribute to the current variation's ``RuntimeRandomizer``."""

    def __init__(self, nb_variation: int = 1, seed: int | None = None) -> None:
        if isinstance(nb_variation, bool) or not isinstance(nb_variation, int) or nb_variation < 1:
            raise ValueError(f"nb_variation must be an int >= 1, got {nb_variation!r}")
        self.nb_variation = nb_variation
        self.seed = seed
        self.variations: list[RuntimeRandomizer] = []
        self._index = 0

    def initialize_randomizer(self, task: BaseTask) -> None:
        generator = SpecGenerator(self.seed)
        specs = ([generator.generate_random_spec(task)] if self.nb_variation == 1
                 else generator.generate_N_spec(task, self.nb_variation))
        self.variations = [RuntimeRandomizer(s) for s in specs]
        self._index = 0

    def set_variation_index(self, index: int) -> None:
        if not 0 <= index < len(self.variations):
            raise RuntimeError(f"variation {index} out of range ({len(self.variations)} variations)")
        self._index = index

    @property
    def current(self) -> RuntimeRandomizer:
        if not self.variations:
            raise RuntimeError("call initialize_randomizer(task) first")
        return self.variations[self._index]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("variations", "nb_variation", "seed"):
            raise AttributeError(name)
        return getattr(self.current, name)


def randomize_task(task: GeneratedTask, seed: int) -> GeneratedTask:
    """A generated task carrying a random vocabulary drawn with ``seed`` from its YAML
    (``task.with_randomization(spec.to_dict())``)."""
    spec = SpecGenerator(seed).generate_random_spec(task)
    return task.with_randomization(spec.to_dict())
