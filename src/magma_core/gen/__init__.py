"""Layer 7: branching data generation (``magma gen``).

``Generator(task, agent, executor, GenerationStore(path), name, GenSettings(...)).run()`` grows
one tree per seed: each situation is asked for B candidates, each candidate is executed in a
free slot restored from its situation's whole-slot snapshot, and everything is stored as it is
produced (resumable). :mod:`magma_core.store.scores` scores the trees as the predecessor does;
:mod:`magma_core.gen.trees` says what each tree runs (a definition's tree its seed's task, a
randomised tree its own vocabulary); :func:`magma_core.gen.assembly.prepare_generation` builds a
target's tasks, judge and agent as ``magma gen`` does.
"""

from magma_core.gen.generator import Generator, GenSettings
from magma_core.store.generation_store import GenerationStore

__all__ = ["GenSettings", "GenerationStore", "Generator"]
