"""``run(spec, listener=None) -> RunResult``: the front door for running episodes.

``magma run`` calls it, and so can any Python program::

    from magma_core.runs import RunSpec, run

    result = run(RunSpec("cube.PickPlace", agent="trace", episodes=4, slots=2))
    print([s.status for s in result.summaries])

It checks everything first (preset, judge requirement, agent, store, resume settings), then
runs the pending episodes through the one placement seam
(:func:`magma_core.runs.placement.place`: here, in worker processes or on Ray), each through
:func:`magma_core.runs.assembly.run_episodes`, and writes ``OUT/NAME.summary.json``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magma_core.agents.model_identity import check_same_weights, with_identity
from magma_core.agents.spec import model_identity
from magma_core.json_types import JSONDict
from magma_core.runs.agent_requests import AgentOutage
from magma_core.runs.assembly import RunParts, prepare, run_episodes
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.placement import Seat, place
from magma_core.runs.ray_actors import EpisodeJob, spec_episodes
from magma_core.runs.spec import RunResult, RunSpec, check_resume
from magma_core.runs.workers import WorkerJob, worker_main
from magma_core.store import EpisodeSummary, RunStore, open_store


@dataclass(frozen=True)
class RunPlan:
    """The payload of the ``"begin"`` event: what this call is about to run."""

    name: str
    todo: list[int]  # episode indices to run now
    stored: int  # episodes stored by earlier invocations (a resumed run)


def run(spec: RunSpec, listener: Listener | None = None) -> RunResult:
    """Run (or resume) the episodes ``spec`` describes; see :class:`RunSpec`.

    ``listener(event, episode, payload)`` sees ``"warning"`` (None, text) and ``"begin"``
    (None, :class:`RunPlan`) first, then per episode ``"start"`` (its view), ``"step"`` (each
    ``StepOutcome``) and ``"end"`` (its ``EpisodeSummary``). With ``workers`` > 1 the
    episode and payloads are small picklable notes with the same fields the display reads;
    on Ray (``spec.ray``) likewise, and each engine actor adds ``"actor"`` (None, its
    :class:`~magma_core.runs.ray_actors.ActorNote`) as it starts.

    Raises :class:`~magma_core.user_error.UserError` for anything the user can fix, before
    any episode starts. An agent outage or a failed worker is reported in
    ``RunResult.failures``: running the same spec again resumes.
    """
    listener = listener or no_listener
    started = time.perf_counter()
    parts = prepare(spec)
    if parts.warning:
        listener("warning", None, parts.warning)
    identity = model_identity(spec.agent)  # what the server serves (engine, version, weights)
    try:
        with open_store(spec.out) as store:
            name, stored = _open_run(spec, store, identity)
            todo = store.pending_episodes(name, spec.episodes)
            listener("begin", None, RunPlan(name, todo, stored))
            if todo and (spec.ray is not None or min(spec.workers, len(todo)) > 1):
                parts.close()  # built to check the spec; each worker or Ray actor builds its own
            failures = place(_RunWork(spec, parts, store), todo, listener=listener,
                             workers=spec.workers, ray=spec.ray)
            summaries = [s for s in store.episodes(name) if s.episode < spec.episodes]
            store_path = store.path
    finally:
        parts.close()
    summary_path = spec.out / f"{name}.summary.json"
    summary_path.write_text(json.dumps(summary_json(name, with_identity(spec.config(), identity), summaries),
                                       indent=2))
    return RunResult(name, store_path, summary_path, summaries, stored, failures,
                     time.perf_counter() - started, with_identity(spec.config(), identity).get("model"))


def _open_run(spec: RunSpec, store: RunStore, identity: JSONDict | None) -> tuple[str, int]:
    """Create or reopen the run, its config with the model's ``identity``; a resume must keep
    the agent, seed, judge and (when both are known) the served weights."""
    name = spec.run_name
    config = with_identity(spec.config(), identity)
    store.lease("run", name)  # a second writer of this name is refused in one line
    stored = store.open_run(name, spec.target, config)
    check_resume(stored["config"], config, name)
    check_same_weights(stored, identity, name, what="run")
    store.update_config(name, config)
    return name, len(store.finished_episodes(name))


@dataclass
class _RunWork:
    """A run's pending episodes as units of work for :func:`~magma_core.runs.placement.place`."""

    spec: RunSpec
    parts: RunParts
    store: RunStore
    unit_word: str = "episode"

    @property
    def concurrency(self) -> int | None:
        return self.spec.pacing.concurrency

    def here(self, units: Sequence[Hashable], listener: Listener) -> list[str]:
        """The episodes in this process; a failure line when the agent became unreachable."""
        try:
            run_episodes(self.spec, self.parts, self.store, slots=min(self.spec.slots, len(units)),
                         listener=listener)
        except AgentOutage as exc:
            return [f"stopped: {exc}"]
        return []

    def worker_job(self, workers: int, units: Sequence[Hashable]) -> tuple[WorkerJob, Callable[..., None]]:
        slots = min(self.spec.slots, -(-len(units) // workers))
        return WorkerJob(spec=self.spec, slots=slots, store_path=Path(self.store.path).resolve()), worker_main

    def actor_job(self, seat: Seat) -> EpisodeJob:
        slots = min(self.spec.slots, -(-seat.units // seat.actors))
        pacing = dataclasses.replace(self.spec.pacing, concurrency=seat.concurrency)
        seat_spec = dataclasses.replace(self.spec, ray=None, pacing=pacing)
        return EpisodeJob(functools.partial(spec_episodes, seat_spec, slots), slots)

    def on_result(self, episode: Any, payload: Any) -> None:
        summary, record, rows = payload
        self.store.save_episode(self.spec.run_name, summary, record, rows)


def summary_json(name: str, config: dict[str, Any], summaries: list[EpisodeSummary]) -> dict:
    """The ``NAME.summary.json`` document: config, one entry per episode, totals."""
    episodes = [s.to_dict() for s in summaries]
    return {
        "run": name,
        "config": config,
        "episodes": episodes,
        "totals": {
            "episodes": len(episodes),
            "success": sum(1 for s in summaries if s.status == "success"),
            "stages_passed": sum(s.stages_passed for s in summaries),
            "stages_total": sum(s.stages_total for s in summaries),
            "optimal": sum(s.optimal for s in summaries),
            "acceptable": sum(s.acceptable for s in summaries),
            "exceeded": sum(s.exceeded for s in summaries),
            "tool_calls": sum(s.tool_calls for s in summaries),
            "total_tokens": sum(s.total_tokens for s in summaries),
            "agent_latency_s": round(sum(s.agent_latency_s for s in summaries), 3),
            "wall_s": round(sum(s.wall_s for s in summaries), 3),
        },
    }
