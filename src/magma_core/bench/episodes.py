"""A benchmark run's trials as the episodes of one run, through the runs assembly.

Trial ``k`` of the suite's item at position ``i`` is episode ``i * K + k`` of the run-store run
``bench.<NAME>`` (K trials per item). Its task is the item's frozen task and its seed is
``seed + k`` (so an item and its paired clean control start from the same scene in each
trial). :class:`SuiteEpisodes` tells the runs front door's
:class:`~magma_core.runs.episode_tasks.ProceduralRunLoop` so: one engine (per process) runs
every item of a group of items sharing a world, ``slots`` trials side by side across items.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from magma_core.agents import Agent, parse_spec
from magma_core.agents.noisy_trace import NoisyTraceAgent
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.bench.task_spec import task_from_spec
from magma_core.json_types import JSONDict
from magma_core.runs import RunSpec
from magma_core.runs.agent_requests import AgentOutage
from magma_core.runs.assembly import (
    RunParts,
    build_judge,
    build_run_agent,
    check_task,
    run_episodes,
    task_skills,
)
from magma_core.runs.events import Listener
from magma_core.runs.placement import Seat
from magma_core.runs.ray_actors import EpisodeJob
from magma_core.runs.workers import episodes_from_parent, event_sender, worker_main
from magma_core.scenarios import register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.tasks import BaseTask
from magma_core.store import RunStore
from magma_core.user_error import UserError


class SuiteEpisodes(EpisodeTasks):
    """The task and seed of each episode of a benchmark run over ``items`` (see the module)."""

    def __init__(self, items: list[JSONDict], trials: int, first: int = 0,
                 user: str | None = None) -> None:
        self.items = items
        self.trials = trials
        self._tasks: OrderedDict[int, BaseTask] = OrderedDict()
        super().__init__(self.item_task(first), user=user)

    def item_task(self, index: int) -> BaseTask:
        """The task of the item at position ``index`` (rebuilt from its JSON, a few cached)."""
        task = self._tasks.get(index)
        if task is None:
            item = self.items[index]
            try:
                task = task_from_spec(item["task"])
            except (TypeError, ValueError, KeyError) as exc:
                raise UserError(f"item {item['item_id']}: its task cannot be loaded: {exc}") from None
            self._tasks[index] = task
            while len(self._tasks) > 64:
                self._tasks.popitem(last=False)
        return task

    def seed_of(self, base_seed: int, episode: int) -> int:
        return base_seed + episode % self.trials

    def task_of(self, episode: int, seed: int) -> BaseTask:
        """The item's frozen task (its instructions in the simulated user's words with
        ``--user``, seeded by the trial's seed)."""
        return self._simulated(self.item_task(episode // self.trials), seed)


def engine_key(item: JSONDict) -> str:
    """What items must share to run on one engine: world, tools, env options, robots and tools
    constant (``Executor.reset_slot`` refuses a task differing in any)."""
    task = item["task"]
    init = task["initialization"]
    return json.dumps([task["maniskill_env_id"], task["tools"], init["env_options"],
                       init["agent_names"], init["tools_constant"]], sort_keys=True)


def engine_groups(items: list[JSONDict]) -> list[list[int]]:
    """Item positions grouped by :func:`engine_key`, in suite order."""
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(engine_key(item), []).append(index)
    return list(groups.values())


def check_items(items: list[JSONDict], judge_spec: str | None,
                judge_options: JSONDict | None = None) -> None:
    """Every item's task loads and passes the engine's checks (e.g. judged stages need
    ``--judge``), before any trial starts."""
    judge = build_judge(judge_spec, judge_options)
    try:
        for item in items:
            check_task(task_from_spec(item["task"]), judge, item["item_id"])
    except (TypeError, ValueError, KeyError) as exc:
        raise UserError(f"the suite's tasks cannot be loaded: {exc}") from None
    finally:
        closer = getattr(judge, "close", None)
        if closer is not None:
            closer()


def build_bench_agent(agent: str, task: BaseTask, agent_options: JSONDict | None = None,
                      timeout: float | None = None) -> Agent:
    """The agent of a benchmark run: ``trace`` / ``noisy-trace[:P]`` replay each slot's own
    episode's trace (noisy: seeded by the trial's seed); any other agent serves every item,
    with ``agent_options`` (a ``ChatOptions``' fields)."""
    spec = parse_spec(agent)
    if spec.kind == "trace":
        return SlotTraceAgent()
    if spec.kind == "noisy-trace":
        noise = spec.noise
        return SlotTraceAgent(lambda trace, seed: NoisyTraceAgent(trace, noise, seed=seed))
    return build_run_agent(agent, task, agent_options=agent_options, timeout=timeout)


@dataclass(frozen=True)
class GroupJob:
    """One group of items to run (plain values, for worker processes too)."""

    run_spec: RunSpec  # the run ``bench.<NAME>``: agent, judge, seed, limits, backend
    items: list[JSONDict]  # every item of the suite, in order
    trials: int
    first: int  # position of the group's first item
    slots: int
    store_path: Path


def group_parts(job: GroupJob) -> RunParts:
    """The task, agent, judge and episode tasks of one engine running ``job``'s items."""
    episodes = SuiteEpisodes(job.items, job.trials, job.first, user=job.run_spec.user)
    scenario = job.items[job.first]["scenario"]
    register_environments(scenario.split(".")[0])
    skills = task_skills(scenario, job.run_spec.skills)  # --skills: the scenario's, by name
    agent = build_bench_agent(job.run_spec.agent, episodes.target, job.run_spec.agent_options,
                              job.run_spec.agent_timeout)
    return RunParts(episodes.target, agent, build_judge(job.run_spec.judge, job.run_spec.judge_options),
                    getattr(agent, "check_warning", None), skills, episode_tasks=episodes)


def run_group(job: GroupJob, store: RunStore, episodes: Iterator[int] | list[int],
              listener: Listener) -> None:
    """Run ``episodes`` (global indices) of one group in this process, storing each as it
    ends; ``AgentOutage`` propagates (the episodes in flight are not stored)."""
    parts = group_parts(job)
    try:
        run_episodes(job.run_spec, parts, store, slots=job.slots, listener=listener,
                     episode_source=iter(episodes))
    finally:
        parts.close()


def worker_run(job: GroupJob, index: int, conn: Connection) -> None:
    """A worker process's part of a group (``runs.workers.worker_main``'s ``run``)."""
    with RunStore(job.store_path) as store:
        run_group(job, store, episodes_from_parent(conn), event_sender(conn, index * job.slots))


@dataclass
class GroupWork:
    """One group's trials as units of work for :func:`~magma_core.runs.placement.place`:
    here (an outage is a failure line), in worker processes, or in Ray actors whose trials
    this process stores."""

    job: GroupJob
    store: RunStore
    unit_word: str = "episode"
    concurrency: int | None = None  # each actor its default

    def here(self, units: Sequence[Hashable], listener: Listener) -> list[str]:
        try:
            run_group(self.job, self.store, list(units), listener)  # type: ignore[arg-type]
        except AgentOutage as exc:
            return [str(exc)]
        return []

    def worker_job(self, workers: int, units: Sequence[Hashable]) -> tuple[GroupJob, Callable[..., None]]:
        return self.job, functools.partial(worker_main, run=worker_run)

    def actor_job(self, seat: Seat) -> EpisodeJob:
        return EpisodeJob(functools.partial(run_group, self.job), self.job.slots)

    def on_result(self, episode: object, payload: object) -> None:
        summary, record, rows = payload
        self.store.save_episode(self.job.run_spec.run_name, summary, record, rows)
