"""Growing a generation's trees in this process: the two steps every path shares.

:func:`prepare` builds and checks a generation's tasks, judge and agent from its
:class:`~magma_core.gen.spec.GenSpec`; :func:`grow_here` grows its trees on one engine. The front
door (:func:`magma_core.gen.entry.generate`) calls both for ``magma gen`` and Python callers,
and each Ray actor (:mod:`magma_core.gen.ray_trees`) calls the same two for the trees it is
handed, so this module sits below both and a running candidate never climbs back to the front
door.
"""

from __future__ import annotations

from typing import Any

from magma_core.gen.assembly import GenParts, prepare_generation
from magma_core.gen.generator import Generator
from magma_core.gen.settings import GenSettings
from magma_core.gen.spec import GenSpec
from magma_core.runs.agent_requests import Pacing
from magma_core.runs.events import Listener
from magma_core.simulation.executor.engine import Engine
from magma_core.store import GenerationStore


def prepare(spec: GenSpec) -> GenParts:
    """Build and check the generation's tasks, judge and agent (see
    :func:`~magma_core.gen.assembly.prepare_generation`)."""
    return prepare_generation(
        spec.target, spec.agent, judge=spec.judge, seed=spec.seed, trees=spec.trees,
        randomized=spec.randomized, agent_options=spec.agent_options,
        agent_timeout=spec.agent_timeout, target_args=spec.target_args, skills=spec.skills,
        user=spec.user,
    )


def grow_here(parts: GenParts, executor: Engine, store: GenerationStore, name: str,
              settings: GenSettings, pacing: Pacing, listener: Listener | None = None, *,
              coaching: Any = None) -> dict[str, Any]:
    """Grow generation ``name``'s trees in this process on ``executor``: THE path from a
    generation to the generator, for ``magma gen``, Python callers and each Ray actor's
    tree (``coaching``: a :class:`~magma_core.gen.coaching.CoachingSettings`). Raises
    :class:`AgentOutage` (what is stored stays)."""
    return Generator(parts.task, parts.agent, executor, store, name, settings,
                     listener=listener, trees=parts.trees, pacing=pacing, coaching=coaching).run()
