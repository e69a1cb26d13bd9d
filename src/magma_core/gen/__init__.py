"""Layer 7: branching data generation (``magma gen``).

``generate(GenSpec(...)) -> GenResult`` is what ``magma gen``, Ray generation and Python
callers use (:mod:`magma_core.gen.entry`): it grows one tree per seed with a
:class:`~magma_core.gen.generator.Generator`: each situation is asked for B candidates, each
candidate is executed in a free slot restored from its situation's whole-slot snapshot, and
everything is stored as it is produced (resumable). :mod:`magma_core.store.scores` scores the
trees as the predecessor does; :mod:`magma_core.gen.trees` says what each tree runs (a
definition's tree its seed's task, a randomised tree its own vocabulary);
:func:`magma_core.gen.assembly.prepare_generation` builds a target's tasks, judge and agent.
"""

from magma_core.gen.entry import generate
from magma_core.gen.generator import Generator
from magma_core.gen.settings import GenSettings
from magma_core.gen.spec import GenPlan, GenResult, GenSpec, TreeSummary
from magma_core.store.generation_store import GenerationStore
from magma_core.user_error import UserError

__all__ = ["GenPlan", "GenResult", "GenSettings", "GenSpec", "GenerationStore", "Generator",
           "TreeSummary", "UserError", "generate"]
