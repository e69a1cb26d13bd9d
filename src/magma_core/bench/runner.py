"""``run_bench(BenchSpec) -> BenchResult``: every item of a compiled suite K times.

Each item's task is rebuilt from its JSON and run through the runs front door's assembly
(:func:`magma_core.runs.assembly.run_episodes`: the one path to the engine); its trials are
the episodes of the run-store run ``bench.<NAME>.<item_id>``, each committed as it ends, so a
killed ``bench run`` resumes with the same command and loses only the trials in flight. The
benchmark run is bound to the suite's fingerprint: resuming on a changed suite is refused.
An item whose agent or judge became unreachable is retried, up to 3 attempts in all; trials
still missing after that count as ``infrastructure_failure``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core.bench.suite import Suite, load_suite
from magma_core.bench.task_spec import task_from_spec
from magma_core.runs import AgentOutage, LoopLimits, RunSpec
from magma_core.runs.assembly import (
    RunParts,
    build_judge,
    build_run_agent,
    check_task,
    run_episodes,
)
from magma_core.runs.spec import check_run_name
from magma_core.scenarios import register_environments
from magma_core.store.bench_store import BenchStore, item_run_name, open_bench_store
from magma_core.user_error import UserError

MAX_ATTEMPTS = 3
Progress = Callable[[str, dict[str, Any]], None]  # (event, payload)


@dataclass(frozen=True)
class BenchSpec:
    """A benchmark run: ``suite`` (a compiled suite folder) with ``agent`` (and ``judge``),
    each item ``trials`` times, ``slots`` trials side by side; stored in ``out/magma.db``
    under ``name`` (default: the suite's name + the agent); the same name resumes it."""

    suite: Path
    agent: str = "trace"
    judge: str | None = None
    trials: int = 1
    slots: int = 1
    seed: int = 0
    out: Path = Path("runs")
    name: str | None = None
    backend: str = "auto"
    limits: LoopLimits = field(default_factory=LoopLimits)

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


def _check(spec: BenchSpec) -> None:
    for key in ("trials", "slots"):
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
    judge = build_judge(spec.judge)
    with open_bench_store(spec.out) as store:
        store.open_bench(name, suite.name, suite.fingerprint,
                         spec.config() | {"items": [item_facts(i) for i in suite.items]})
        result = BenchResult(name, store.path)
        for item in suite.items:
            _run_item(spec, name, item, judge, store, result, notify)
    closer = getattr(judge, "close", None)
    if closer is not None:
        closer()
    result.elapsed_s = time.perf_counter() - started
    return result


def _run_item(spec: BenchSpec, name: str, item: dict[str, Any], judge: Any,
              store: BenchStore, result: BenchResult, notify: Progress) -> None:
    run_name = item_run_name(name, item["item_id"])
    run_spec = RunSpec(item["scenario"], agent=spec.agent, judge=spec.judge, episodes=spec.trials,
                       slots=min(spec.slots, spec.trials), seed=spec.seed, out=spec.out,
                       name=run_name, limits=spec.limits, backend=spec.backend)
    store.open_run(run_name, item["scenario"], run_spec.config() | {"item": item["item_id"]})
    done = len(store.finished_episodes(run_name))
    result.resumed += min(done, spec.trials)
    while store.pending_episodes(run_name, spec.trials):
        if store.failures(name).get(item["item_id"], 0) >= MAX_ATTEMPTS:
            result.given_up.append(item["item_id"])
            notify("given_up", {"item": item["item_id"]})
            return
        register_environments(item["scenario"].split(".")[0])
        task = task_from_spec(item["task"])
        check_task(task, judge, item["item_id"])
        parts = RunParts(task, build_run_agent(spec.agent, task), judge)
        notify("item", {"item": item["item_id"], "pending": len(store.pending_episodes(run_name, spec.trials))})
        try:
            finished = run_episodes(run_spec, parts, store, slots=run_spec.slots,
                                    listener=_episode_listener(item, notify))
            result.ran += len(finished)
        except AgentOutage as exc:
            attempts = store.record_failure(name, item["item_id"], str(exc))
            notify("outage", {"item": item["item_id"], "attempts": attempts, "error": str(exc)})
        finally:
            parts.agent.close()


def _episode_listener(item: dict[str, Any], notify: Progress) -> Callable[[str, Any, Any], None]:
    def listener(event: str, episode: Any, payload: Any) -> None:
        if event == "end":
            notify("trial", {"item": item["item_id"], "trial": payload.episode,
                             "status": payload.status})
    return listener
