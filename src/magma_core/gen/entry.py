"""``generate(spec, listener=None) -> GenResult``: the front door for growing generation trees.

``magma gen`` calls it, and so can any Python program::

    from magma_core.gen import GenSpec, generate

    result = generate(GenSpec("cube.PickPlace", max_nodes=20, slots=2))
    print(result.counts)

It checks everything first (target, judge, agent, store, the settings a resumed generation
must keep, ``ray`` against a generation grown without it), then grows the trees not yet
finished: here, in one engine through :func:`grow_here`, or one tree per unit of work on Ray
(:mod:`magma_core.gen.ray_trees`), whose actors call :func:`grow_here` too.
"""

from __future__ import annotations

import time
from typing import Any

from magma_core.gen import scores as sc
from magma_core.gen.assembly import GenParts, prepare_generation
from magma_core.gen.generator import Generator, GenSettings
from magma_core.gen.spec import GenPlan, GenResult, GenSpec, TreeSummary
from magma_core.runs.assembly import open_executor
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.pipeline import AgentOutage, Pacing
from magma_core.simulation.executor.engine import Engine
from magma_core.store import GenerationStore, open_generation_store
from magma_core.user_error import UserError


def prepare(spec: GenSpec) -> GenParts:
    """Build and check the generation's tasks, judge and agent (see
    :func:`~magma_core.gen.assembly.prepare_generation`)."""
    return prepare_generation(
        spec.target, spec.agent, judge=spec.judge, seed=spec.seed, trees=spec.trees,
        randomized=spec.randomized, agent_options=spec.agent_options,
        agent_timeout=spec.agent_timeout,
    )


def generate(spec: GenSpec, listener: Listener | None = None) -> GenResult:
    """Grow (or resume) the generation ``spec`` describes; see :class:`GenSpec`.

    ``listener(event, subject, payload)`` sees ``"begin"`` (None, :class:`GenPlan`) once the
    checks passed, then ``"candidate"`` (tree, counts) as each candidate is stored here, or
    with Ray ``"warning"`` (None, text), ``"actor"`` (None, its note) and ``"tree"`` (tree,
    its rows) as each tree is stored.

    Raises :class:`~magma_core.user_error.UserError` for anything the user can fix, before
    any tree grows. An agent outage or a failed Ray actor is reported in
    ``GenResult.failures``: what is stored stays, and the same spec resumes.
    """
    listener = listener or no_listener
    started = time.perf_counter()
    name, settings = spec.generation_name, spec.settings()
    parts = prepare(spec)
    store = open_generation_store(spec.out)
    try:
        before = _open_generation(spec, store, name)
        if spec.ray is not None:
            parts.agent.close()  # built to check the spec; each actor builds its own
            return _grow_on_ray(spec, store, name, settings, before, listener, started)
        executor = open_executor(parts.task, spec.slots, spec.seed, parts.judge, spec.backend)
    except BaseException:
        parts.agent.close()
        store.close()
        raise
    try:
        listener("begin", None, GenPlan(name, settings, executor.num_slots, spec.randomized,
                                        False, settings.max_nodes))
        failures: list[str] = []
        summary: dict[str, Any] = {}
        try:
            summary = grow_here(parts, executor, store, name, settings, spec.pacing, listener)
            store.update_generation(name, spec.config(), finished=True)
        except AgentOutage as exc:
            failures = [str(exc)]
        return GenResult(name, store.path, store.counts(name), tree_summaries(store, name),
                         executed=summary.get("executed"),
                         snapshot_s=summary.get("snapshot_s", 0.0) + summary.get("restore_s", 0.0),
                         failures=failures, elapsed_s=time.perf_counter() - started)
    finally:
        executor.close()
        parts.agent.close()
        store.close()


def grow_here(parts: GenParts, executor: Engine, store: GenerationStore, name: str,
              settings: GenSettings, pacing: Pacing, listener: Listener | None = None) -> dict[str, Any]:
    """Grow generation ``name``'s trees in this process on ``executor``: THE path from a
    generation to the generator, for ``magma gen``, Python callers and each Ray actor's
    tree. Raises :class:`AgentOutage` (what is stored stays)."""
    return Generator(parts.task, parts.agent, executor, store, name, settings,
                     listener=listener, trees=parts.trees, pacing=pacing).run()


def _open_generation(spec: GenSpec, store: GenerationStore, name: str) -> dict[str, Any]:
    """Create or reopen the generation; a resume must keep the settings that shape its trees,
    and a generation grown without Ray is not resumed with it. Returns the stored config."""
    try:
        stored = store.open_generation(name, spec.target, spec.config())
    except ValueError as exc:
        raise UserError(str(exc)) from None
    before = {"randomized": False, **stored["config"]}
    changed = {k: (before[k], v) for k, v in spec.shape().items() if k in before and before[k] != v}
    if changed:
        raise UserError(f"generation {name!r} was grown with other settings {changed} (stored, given); "
                        "choose another --name")
    if spec.ray is not None and store.trees(name) and not before.get("ray"):
        raise UserError(f"generation {name!r} was grown without --ray: resume it without --ray "
                        "(with --ray a stored tree counts as finished)")
    return before


def _grow_on_ray(spec: GenSpec, store: GenerationStore, name: str, settings: GenSettings,
                 before: dict[str, Any], listener: Listener, started: float) -> GenResult:
    """The trees not yet stored, grown on ``spec.ray``'s cluster; closes ``store``."""
    from magma_core.gen.ray_trees import TreeJob, grow_on_ray, tree_budget

    job = TreeJob(spec)
    assert spec.ray is not None
    try:
        listener("begin", None, GenPlan(name, settings, spec.slots, spec.randomized, True,
                                        tree_budget(settings.max_nodes, settings.trees)))

        def on_tree(tree: int, grown: Any) -> None:
            listener("tree", tree, grown)

        failures = grow_on_ray(spec.ray, job, store, name, listener, on_tree)
        store.update_generation(name, spec.config(), finished=not failures)
        return GenResult(name, store.path, store.counts(name), tree_summaries(store, name),
                         failures=failures, elapsed_s=time.perf_counter() - started)
    finally:
        store.close()


def tree_summaries(store: GenerationStore, name: str) -> list[TreeSummary]:
    """Per tree: seed, situations, candidates, successes, invalid answers, depth, best score."""
    situations = store.situations(name)
    candidates = store.candidates(name)
    roots = {s.tree: s.id for s in situations if s.parent is None}
    out = []
    for tree in store.trees(name):
        t = tree["tree"]
        mine = [c for c in candidates if c.tree == t]
        best = max((sc.score(sc.results_from_json(c.score)) for c in mine
                    if c.score and c.situation == roots.get(t)), default=0.0)
        out.append(TreeSummary(
            t, tree["seed"], sum(s.tree == t for s in situations), len(mine),
            sum(c.episode_status == "success" for c in mine),
            sum(c.status == "invalid" for c in mine),
            max((s.depth for s in situations if s.tree == t), default=0), best,
        ))
    return out
