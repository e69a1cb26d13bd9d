"""``generate(spec, listener=None) -> GenResult``: the front door for growing generation trees.

``magma gen`` calls it, and so can any Python program::

    from magma_core.gen import GenSpec, generate

    result = generate(GenSpec("cube.PickPlace", max_nodes=20, slots=2))
    print(result.counts)

It checks everything first (target, judge, agent, store, the settings a resumed generation
must keep, ``ray`` against a generation grown without it), then grows the trees not yet
finished: here, in one engine through :func:`~magma_core.gen.growing.grow_here`, or one tree
per unit of work on Ray (:mod:`magma_core.gen.ray_trees`), whose actors call the same
:mod:`~magma_core.gen.growing` steps (below both, so neither imports the other back).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from magma_core.gen.assembly import GenParts
from magma_core.gen.budget_check import budget_warning
from magma_core.gen.control import RecordingEngine, RecordingStore
from magma_core.gen.growing import grow_here, prepare
from magma_core.gen.ray_trees import GrownTree, TreeJob, store_tree, tree_budget
from magma_core.gen.spec import GenPlan, GenResult, GenSpec, TreeSummary
from magma_core.runs.agent_requests import AgentOutage
from magma_core.runs.assembly import open_executor
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.placement import Seat, place
from magma_core.store import GenerationStore, open_generation_store
from magma_core.store import scores as sc
from magma_core.user_error import UserError


def generate(spec: GenSpec, listener: Listener | None = None) -> GenResult:
    """Grow (or resume) the generation ``spec`` describes; see :class:`GenSpec`.

    ``listener(event, subject, payload)`` sees ``"begin"`` (None, :class:`GenPlan`) once the
    checks passed, then ``"candidate"`` (tree, counts) as each candidate is stored here, or
    with Ray ``"warning"`` (None, text), ``"actor"`` (None, its note) and ``"tree"`` (tree,
    its rows) as each tree is stored.

    Raises :class:`~magma_core.user_error.UserError` for anything the user can fix, before
    any tree grows (a second writer of the same generation name, a store fault: one line). An agent outage or a failed Ray actor is reported in
    ``GenResult.failures``: what is stored stays, and the same spec resumes.
    """
    listener = listener or no_listener
    started = time.perf_counter()
    name = spec.generation_name
    parts = prepare(spec)
    warning = budget_warning(parts.task, spec.branches, spec.max_per_stage, spec.max_nodes, spec.trees)
    if warning:  # the node budget cannot reach the last stage: said before any tree grows
        listener("warning", None, warning)
    closed = False
    store = open_generation_store(spec.out)
    try:
        store.lease("generation", name)  # a second writer of this name is refused in one line
        _open_generation(spec, store, name)
        work = TreeWork(spec, parts, store, name, listener)
        if spec.ray is not None:
            parts.agent.close()  # built to check the spec; each actor builds its own
            closed = True
            listener("begin", None, work.plan(spec.slots))
            stored = {t["tree"] for t in store.trees(name)}
            todo = [t for t in range(spec.trees) if t not in stored]
        else:
            todo = list(range(spec.trees))  # one generator grows (or resumes) them all here
        failures = place(work, todo, listener=listener, ray=spec.ray)
        if spec.ray is not None:
            store.update_generation(name, spec.config(), finished=not failures)
        return GenResult(name, store.path, store.counts(name), tree_summaries(store, name),
                         executed=work.summary.get("executed"),
                         snapshot_s=work.summary.get("snapshot_s", 0.0) + work.summary.get("restore_s", 0.0),
                         failures=failures, elapsed_s=time.perf_counter() - started,
                         coaching=work.summary.get("coaching"),
                         errors=sum(c.episode_status == "error" for c in store.candidates(name)))
    finally:
        if not closed:
            parts.agent.close()
        store.close()


@dataclass
class TreeWork:
    """A generation's trees as units of work for :func:`~magma_core.runs.placement.place`:
    here, one generator grows every tree; on Ray, each actor grows the trees it is handed
    (a :class:`~magma_core.gen.ray_trees.TreeJob`) and this process stores each."""

    spec: GenSpec
    parts: GenParts
    store: GenerationStore
    name: str
    listener: Listener
    unit_word: str = "tree"
    summary: dict[str, Any] = field(default_factory=dict)  # the generator's, when grown here

    @property
    def concurrency(self) -> int | None:
        return self.spec.pacing.concurrency

    def plan(self, slots: int) -> GenPlan:
        settings, ray = self.spec.settings(), self.spec.ray is not None
        budget = tree_budget(settings.max_nodes, settings.trees) if ray else settings.max_nodes
        return GenPlan(self.name, settings, slots, self.spec.randomized, ray, budget)

    def here(self, units: Sequence[Hashable], listener: Listener) -> list[str]:
        """Every tree in one engine here; an agent outage is a failure line."""
        spec = self.spec
        executor = open_executor(self.parts.task, spec.slots, spec.seed, self.parts.judge, spec.backend,
                                 skills=self.parts.skills, fresh_scene=spec.fresh_scenes,
                                 record_control=spec.record_control)
        engine: Any = executor
        store: Any = self.store
        if spec.record_control:  # each candidate's control steps, stored with it (gen.control)
            engine = RecordingEngine(executor, executor.control_recorder)
            store = RecordingStore(self.store, engine)
        try:
            listener("begin", None, self.plan(executor.num_slots))
            try:
                coaching = {} if spec.coaching is None else {"coaching": spec.coaching}
                self.summary = grow_here(self.parts, engine, store, self.name,
                                         spec.settings(), spec.pacing, listener, **coaching)
            except AgentOutage as exc:
                return [str(exc)]
            self.store.update_generation(self.name, spec.config(), finished=True)
            return []
        finally:
            executor.close()

    def worker_job(self, workers: int, units: Sequence[Hashable]) -> tuple[Any, Callable[..., None]]:
        raise UserError("magma gen grows its trees here or on Ray, not in worker processes")

    def actor_job(self, seat: Seat) -> TreeJob:
        pacing = dataclasses.replace(self.spec.pacing, concurrency=seat.concurrency)
        return TreeJob(dataclasses.replace(self.spec, pacing=pacing, ray=None))

    def on_result(self, tree: int, grown: GrownTree) -> None:
        store_tree(self.store, self.name, tree, grown)
        self.listener("tree", tree, grown)


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
    if bool(before.get("record_control")) != spec.record_control and store.trees(name):
        raise UserError(f"generation {name!r} was grown {'with' if before.get('record_control') else 'without'} "
                        "--record-control: resume it the same way (its candidates are recorded alike or not at all)")
    if spec.ray is not None and store.trees(name) and not before.get("ray"):
        raise UserError(f"generation {name!r} was grown without --ray: resume it without --ray "
                        "(with --ray a stored tree counts as finished)")
    return before


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
