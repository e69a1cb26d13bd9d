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

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.agents.model_identity import check_same_weights, with_identity
from magma_core.agents.spec import model_facts, model_identity
from magma_core.bench.episodes import GroupJob, GroupWork, check_items, engine_groups
from magma_core.bench.suite import Suite, load_suite
from magma_core.json_types import JSONDict
from magma_core.runs import RunSpec
from magma_core.runs.assembly import task_skills
from magma_core.runs.limits import MAX_ATTEMPTS
from magma_core.runs.placement import place
from magma_core.runs.spec import check_run_name
from magma_core.store.bench_store import BenchStore, bench_run_name, open_bench_store
from magma_core.user_error import UserError

Progress = Callable[[str, JSONDict], None]  # (event, payload)


#: The target of a benchmark's ``RunSpec`` part until the suite is loaded (its items name theirs).
SUITE_TARGET = "suite"
_RUN_FIELDS = frozenset(RunSpec.__dataclass_fields__) - {"target", "episodes"}


@dataclass(frozen=True, init=False)
class BenchSpec:
    """A benchmark run: ``suite`` (a compiled suite folder), each item ``trials`` times, with
    the run-shaped part ``run`` (a :class:`RunSpec`: ``agent``, ``judge``, ``slots`` trials side
    by side in one engine, in each of ``workers`` processes, ``seed``, ``out``, ``name``,
    ``backend``, ``limits``, ``ray``, the model options ``agent_options``/``judge_options``);
    its target and episodes come from the suite.

    ``BenchSpec(suite, trials=2, agent="trace", slots=2)`` builds the ``RunSpec`` part from
    its fields, ``BenchSpec(suite, trials=2, run=RunSpec(...))`` takes one; either way
    ``spec.agent`` and the other fields read the part. Stored in ``out/magma.db`` under
    ``name`` (default: the suite's name + the agent); the same name resumes it."""

    suite: Path
    trials: int
    run: RunSpec

    def __init__(self, suite: str | Path, trials: int = 1, run: RunSpec | None = None,
                 **run_fields: object) -> None:
        unknown = set(run_fields) - _RUN_FIELDS
        if unknown:
            raise TypeError(f"BenchSpec got unexpected fields {sorted(unknown)}")
        if run is None:
            run = RunSpec(SUITE_TARGET, **run_fields)
        elif run_fields:
            run = dataclasses.replace(run, **run_fields)
        if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
            raise UserError(f"trials must be a positive integer, got {trials!r}")
        object.__setattr__(self, "suite", Path(suite))
        object.__setattr__(self, "trials", trials)
        object.__setattr__(self, "run", run)

    def __getattr__(self, name: str) -> Any:
        if name in _RUN_FIELDS:
            return getattr(self.run, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def config(self) -> JSONDict:
        run = self.run
        config = {"agent": run.agent, "judge": run.judge, "trials": self.trials,
                  "seed": run.seed, "suite_dir": str(self.suite)}
        if run.agent_options:
            config["agent_options"] = run.agent_options
        if run.skills is not None:
            config["skills"] = list(run.skills)
        if run.user:
            config["user"] = run.user
        model = model_facts(run.agent, run.agent_options)
        if model is not None:
            config["model"] = model
        return config | observed(run)


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


def observed(run: RunSpec) -> JSONDict:
    """``{"observe": [...]}`` when the trials' agent observes more than text, else ``{}``."""
    return {"observe": list(run.observe)} if run.observe else {}


def item_facts(item: JSONDict) -> JSONDict:
    """What the report needs of an item (kept with the benchmark run in the store)."""
    meta = item["metadata"]
    return {k: item[k] for k in ("item_id", "skeleton_id", "track", "condition", "length_bucket",
                                 "scenario")} | {
        "control": meta["control_episode_id"], "stages": meta["number_of_stages"],
        "lags": meta["intervention_lags"], "oracle_calls": meta["episode_oracle_tool_calls"]}


def bench_name(spec: BenchSpec, suite: Suite) -> str:
    """The benchmark run's name: ``spec.run.name`` or ``<suite>-<agent kind>``."""
    if spec.run.name:
        return check_run_name(spec.run.name)
    agent = "".join(c if c.isalnum() or c in "_.-" else "-" for c in spec.run.agent)
    return check_run_name(f"{suite.name}-{agent}"[:80])


def run_bench(spec: BenchSpec, progress: Progress | None = None) -> BenchResult:
    """Run (or resume) every item of ``spec.suite`` ``spec.trials`` times; see the module."""
    started = time.perf_counter()
    suite = load_suite(spec.suite)
    name = bench_name(spec, suite)
    notify = progress or (lambda event, payload: None)
    check_items(suite.items, spec.run.judge, spec.run.judge_options)
    if spec.run.skills is not None:  # an unknown skill name is one line, before any trial
        for scenario in sorted({item["scenario"] for item in suite.items}):
            task_skills(scenario, spec.run.skills)
    identity = model_identity(spec.run.agent)
    with open_bench_store(spec.run.out) as store:
        store.lease("bench", name)  # a second writer of this name is refused in one line
        check_same_weights(store.get_bench(name), identity, name)
        store.open_bench(name, suite.name, suite.fingerprint, with_identity(
            spec.config() | {"items": [item_facts(i) for i in suite.items]}, identity))
        run_spec = dataclasses.replace(spec.run, target=suite.items[0]["scenario"],
                                       episodes=len(suite.items) * spec.trials,
                                       name=bench_run_name(name), ray=None)
        store.open_run(run_spec.run_name, suite.name,
                       with_identity(run_spec.config() | {"bench": name}, identity))
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

    def listener(event: str, episode: object, payload: object) -> None:
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

    workers = min(spec.run.workers, len(episodes))
    job = GroupJob(run_spec, items, trials, first, min(spec.run.slots, -(-len(episodes) // workers)),
                   Path(store.path).resolve())
    errors = place(GroupWork(job, store), episodes, listener=listener, workers=spec.run.workers,
                   ray=spec.run.ray)
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
