"""``run_bench(BenchSpec) -> BenchResult``: every item of a compiled suite K times.

The trials are the episodes of one run-store run, ``bench.<NAME>`` (trial ``k`` of item ``i``
is episode ``i * K + k``, see :mod:`magma_core.bench.episodes`), run through the runs front
door's assembly (:func:`magma_core.runs.assembly.run_episodes`, the one path to the engine):
one engine per process keeps ``slots`` trials side by side across items, in each of
``workers`` processes (``magma run --workers``' worker pool). Each trial is committed as it
ends, so a killed ``bench run`` resumes with the same command and loses only the trials in
flight. The benchmark run is bound to the suite's fingerprint: resuming on a changed suite is
refused. When the agent or judge becomes unreachable, the items with a trial in flight lose
an attempt and the run goes on; an item that lost 3 attempts is given up, its missing trials
count as ``infrastructure_failure``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.bench.episodes import GroupJob, check_items, engine_groups, run_group, worker_run
from magma_core.bench.suite import Suite, load_suite
from magma_core.runs import AgentOutage, LoopLimits, RunSpec
from magma_core.runs.ray_cluster import RayCluster
from magma_core.runs.ray_driver import episodes_on_ray
from magma_core.runs.spec import check_run_name
from magma_core.runs.workers import run_in_workers, worker_main
from magma_core.store.bench_store import BenchStore, bench_run_name, open_bench_store
from magma_core.user_error import UserError

MAX_ATTEMPTS = 3
Progress = Callable[[str, dict[str, Any]], None]  # (event, payload)


@dataclass(frozen=True)
class BenchSpec:
    """A benchmark run: ``suite`` (a compiled suite folder) with ``agent`` (and ``judge``),
    each item ``trials`` times, ``slots`` trials side by side in one engine, in each of
    ``workers`` processes; stored in ``out/magma.db`` under ``name`` (default: the suite's
    name + the agent); the same name resumes it."""

    suite: Path
    agent: str = "trace"
    judge: str | None = None
    trials: int = 1
    slots: int = 1
    workers: int = 1
    seed: int = 0
    out: Path = Path("runs")
    name: str | None = None
    backend: str = "auto"
    limits: LoopLimits = field(default_factory=LoopLimits)
    ray: RayCluster | None = None  # run the engine groups in actors on this Ray cluster

    def config(self) -> dict[str, Any]:
        return {"agent": self.agent, "judge": self.judge, "trials": self.trials,
                "seed": self.seed, "suite_dir": str(self.suite)}


@dataclass
class BenchResult:
    """What :func:`run_bench` did: the run's name, store, trials run now, resumed ones and
    items given up on (infrastructure failures)."""

    name: str
    store_path: Path
    ran: int = 0
    resumed: int = 0
    given_up: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    failures: list[str] = field(default_factory=list)  # one line per lost attempt
    errors: int = 0  # stored trials that hit a scenario error (status error)


def _check(spec: BenchSpec) -> None:
    for key in ("trials", "slots", "workers"):
        value = getattr(spec, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"{key} must be a positive integer, got {value!r}")


def item_facts(item: dict[str, Any]) -> dict[str, Any]:
    """What the report needs of an item (kept with the benchmark run in the store)."""
    meta = item["metadata"]
    return {k: item[k] for k in ("item_id", "skeleton_id", "track", "condition", "length_bucket")} | {
        "control": meta["control_episode_id"], "stages": meta["number_of_stages"],
        "lags": meta["intervention_lags"], "oracle_calls": meta["episode_oracle_tool_calls"]}


def bench_name(spec: BenchSpec, suite: Suite) -> str:
    """The benchmark run's name: ``spec.name`` or ``<suite>-<agent kind>``."""
    if spec.name:
        return check_run_name(spec.name)
    agent = "".join(c if c.isalnum() or c in "_.-" else "-" for c in spec.agent)
    return check_run_name(f"{suite.name}-{agent}"[:80])


def run_bench(spec: BenchSpec, progress: Progress | None = None) -> BenchResult:
    """Run (or resume) every item of ``spec.suite`` ``spec.trials`` times; see the module."""
    started = time.perf_counter()
    _check(spec)
    suite = load_suite(spec.suite)
    name = bench_name(spec, suite)
    notify = progress or (lambda event, payload: None)
    check_items(suite.items, spec.judge)
    with open_bench_store(spec.out) as store:
        store.lease("bench", name)  # a second writer of this name is refused in one line
        store.open_bench(name, suite.name, suite.fingerprint,
                         spec.config() | {"items": [item_facts(i) for i in suite.items]})
        run_spec = RunSpec(suite.items[0]["scenario"], agent=spec.agent, judge=spec.judge,
                           episodes=len(suite.items) * spec.trials, slots=spec.slots,
                           workers=spec.workers, seed=spec.seed, out=spec.out,
                           name=bench_run_name(name), limits=spec.limits, backend=spec.backend)
        store.open_run(run_spec.run_name, suite.name, run_spec.config() | {"bench": name})
        result = BenchResult(name, store.path)
        result.resumed = len(store.finished_episodes(run_spec.run_name))
        _run_pending(spec, suite, run_spec, store, result, notify)
        failures = store.failures(name)
        pending = store.pending_episodes(run_spec.run_name, run_spec.episodes)
        result.given_up = sorted({suite.items[e // spec.trials]["item_id"] for e in pending
                                  if failures.get(suite.items[e // spec.trials]["item_id"], 0)
                                  >= MAX_ATTEMPTS}, key=[i["item_id"] for i in suite.items].index)
        result.errors = sum(s.status == "error" for s in store.episodes(run_spec.run_name))
    result.elapsed_s = time.perf_counter() - started
    return result


def _run_pending(spec: BenchSpec, suite: Suite, run_spec: RunSpec, store: BenchStore,
                 result: BenchResult, notify: Progress) -> None:
    """Run every pending trial of items not given up, group by group, until none is left;
    each outage costs the items in flight an attempt."""
    items, trials = suite.items, spec.trials
    groups = engine_groups(items)
    while True:
        failures = store.failures(result.name)
        alive = {i for i, item in enumerate(items) if failures.get(item["item_id"], 0) < MAX_ATTEMPTS}
        todo = [e for e in store.pending_episodes(run_spec.run_name, run_spec.episodes)
                if e // trials in alive]
        if not todo:
            return
        lost = False
        for group in groups:
            members = set(group)
            episodes = [e for e in todo if e // trials in members]
            if episodes and _run_one_group(spec, suite, run_spec, store, group[0], episodes,
                                           result, notify):
                lost = True
                break  # attempts were lost: count again what is left
        if not lost:
            return


def _run_one_group(spec: BenchSpec, suite: Suite, run_spec: RunSpec, store: BenchStore,
                   first: int, episodes: list[int], result: BenchResult,
                   notify: Progress) -> bool:
    """Run ``episodes`` of one engine group; True when attempts were lost to an outage (then
    recorded against the items that had a trial in flight)."""
    items, trials = suite.items, spec.trials
    in_flight: set[int] = set()

    def listener(event: str, episode: Any, payload: Any) -> None:
        if event == "start":
            in_flight.add(episode.episode)
        elif event == "end":
            in_flight.discard(episode.episode)
            result.ran += 1
            item = items[episode.episode // trials]
            notify("trial", {"item": item["item_id"], "trial": episode.episode % trials,
                             "status": payload.status, "episode": episode.episode})
        elif event == "notice":
            notify("notice", {"line": str(payload)})

    workers = min(spec.workers, len(episodes))
    job = GroupJob(run_spec, items, trials, first, min(spec.slots, -(-len(episodes) // workers)),
                   Path(store.path).resolve())
    errors: list[str] = []
    if spec.ray is not None:  # actors on a Ray cluster; this process stores the trials
        errors = episodes_on_ray(spec.ray, functools.partial(run_group, job), episodes,
                                 slots=job.slots, store=store, run_name=run_spec.run_name,
                                 listener=listener)
    elif workers == 1:
        try:
            run_group(job, store, episodes, listener)
        except AgentOutage as exc:
            errors.append(str(exc))
    else:
        target = functools.partial(worker_main, run=worker_run)
        errors = run_in_workers(job, episodes, workers, listener, target=target)  # type: ignore[arg-type]
    if not errors:
        return False
    blamed = {items[e // trials]["item_id"] for e in in_flight} or {items[episodes[0] // trials]["item_id"]}
    for item_id in sorted(blamed):
        attempts = store.record_failure(result.name, item_id, errors[0])
        result.failures.append(f"{item_id}: {errors[0]}")
        notify("outage", {"item": item_id, "attempts": attempts, "error": errors[0]})
        if attempts >= MAX_ATTEMPTS:
            notify("given_up", {"item": item_id})
    return True
