"""``TrainingEnv``: groups of rollouts for trainers, over the one engine, stored like any run.

::

    from magma_core.rl import TaskSource, TrainingEnv

    with TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0, 1]), slots=4, out="runs") as env:
        group = env.group(0, size=4)               # G rollouts from one saved world
        observations = group.reset()               # opening messages + tool schemas, per rollout
        results = group.step([policy(o) for o in observations])   # one engine submit
        results[0].messages, results[0].reward, results[0].done, results[0].info

A group's start is one whole-slot snapshot (:mod:`magma_core.simulation.executor.snapshots`):
the task's first decision with the item's seed, or a stored situation. Each rollout's
``reset()`` restores it into a free slot, so the G rollouts start from bit-identical world
states (``Observation.digest``, SHA-256 of the slot's world read back from the simulator).
``step(assistant_message)`` turns the reply into a decision as the ``openai:`` agent does
(:mod:`magma_core.rl.chat`), and steps given together (``group.step``, ``env.step``, or
``astep`` calls that arrive in the same event-loop turn) are executed together in one
``Executor.submit``, as ``magma run``'s loop executes decisions that arrive together.

A rollout ends when the engine ends its episode, at ``magma run``'s loop limits
(:class:`~magma_core.runs.LoopLimits`: decisions without a tool call on an action stage, the
decision cap), or when the trainer calls ``end()``. Its record is then written to the run
store in one transaction (run ``NAME``, episodes numbered in the order rollouts end), with its
reward (:mod:`magma_core.rl.rewards`) and its group under ``rl``: ``magma view`` and ``magma
export`` read training rollouts as any run. A killed trainer loses only rollouts in flight;
a new ``TrainingEnv`` with the same name goes on numbering after the stored ones.

The environment owns the engine, the free slots and the store; the handles a trainer holds
(:class:`Group`, :class:`Rollout`, :class:`Observation`, :class:`StepResult`) are in
:mod:`magma_core.rl.rollouts`, a group's start is made by :mod:`magma_core.rl.group_starts`,
and ``astep`` calls are gathered into one step by :mod:`magma_core.rl.step_batching`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from magma_core.rl.chat import ChatSession
from magma_core.rl.digest import world_digest
from magma_core.rl.group_starts import start_snapshot
from magma_core.rl.rewards import Reward, RewardFn, score
from magma_core.rl.rollouts import Group, Observation, Rollout, StepResult
from magma_core.rl.step_batching import StepBatcher
from magma_core.rl.tasks import TaskItem, TaskSource
from magma_core.runs import AgentOutage, LoopLimits
from magma_core.runs.assembly import build_judge, check_task, open_executor
from magma_core.runs.limits import with_failed_calls
from magma_core.runs.loop import build_input
from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.simulation.executor.records import JUDGE_UNAVAILABLE
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import STORE_FILE, RunStore, episode_rows, episode_summary, open_store
from magma_core.user_error import UserError

__all__ = ["TRUNCATED", "Group", "Observation", "Rollout", "StepResult", "TrainingEnv"]

TRUNCATED = "truncated"  # ended by the trainer


class TrainingEnv:
    """The live environment for trainers over ``source`` (see the module doc).

    ``slots``: engine slots (rollouts running at once, over all groups). ``out``/``name``: the
    run store folder and run (default ``rl.<source name>``); ``store=False`` keeps nothing.
    ``reward``: a :class:`~magma_core.rl.rewards.Reward` (the default formula's weights) or a
    function over the episode record. ``limits``: as ``magma run``'s. ``judge``: for judged
    answer stages (``none`` or ``openai:MODEL``). ``backend``: ``cpu``, ``gpu`` or ``auto``.
    """

    def __init__(self, source: TaskSource, *, slots: int = 8, out: str | Path = "runs",
                 name: str | None = None, reward: Reward | RewardFn | None = None,
                 limits: LoopLimits | None = None, judge: str | None = None,
                 backend: str = "auto", store: bool = True) -> None:
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            raise UserError(f"slots must be a positive integer, got {slots!r}")
        self.source = source
        self.reward = reward if reward is not None else Reward()
        self.limits = limits or LoopLimits()
        self.name = name or f"rl.{source.name}"
        self._judge = build_judge(judge)
        for task in {id(i.task): i.task for i in source}.values():
            check_task(task, self._judge, source.name)
        self.engine = open_executor(source[0].task, slots, source[0].seed, self._judge, backend)
        self.executor = PublicVocabularyExecutor(self.engine)
        self._lock = threading.RLock()
        self._free = deque(range(slots))
        self._running: dict[int, Rollout] = {}
        self._groups = 0
        self._async: StepBatcher | None = None
        # Rollouts may end in the async path's worker thread: every use of the store is under
        # ``_lock``, so one connection serves both threads.
        self.store = RunStore(_store_file(out), check_same_thread=False) if store else None
        self._next_episode = 0
        if self.store is not None:
            self.store.open_run(self.name, source.name, self.config())
            done = self.store.finished_episodes(self.name)
            self._next_episode = max(done) + 1 if done else 0

    @property
    def num_slots(self) -> int:
        return self.engine.num_slots

    def config(self) -> dict[str, Any]:
        """The run's configuration as stored with it."""
        reward = self.reward.__dict__ if isinstance(self.reward, Reward) else {
            "function": getattr(self.reward, "__name__", type(self.reward).__name__)}
        return {"preset": self.source.name, "agent": "rl", "driver": "rl", "slots": self.num_slots,
                "max_decisions": self.limits.max_decisions, "reward": dict(reward)}

    # -- groups ------------------------------------------------------------------------------
    def group(self, item: TaskItem | int | str = 0, size: int = 4) -> Group:
        """A group of ``size`` rollouts starting from one snapshot of ``item`` (a
        :class:`TaskItem`, or an index or id in the source); reset its rollouts to start."""
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise UserError(f"a group's size must be a positive integer, got {size!r}")
        if not isinstance(item, TaskItem):
            item = self.source[item]
        with self._lock:
            snapshot = None
            if self._free:  # made now, so a bad item fails here; else at the first reset
                slot = self._acquire()
                try:
                    snapshot = start_snapshot(self.executor, item, slot)
                finally:
                    self._free.appendleft(slot)
            self._groups += 1
            return Group(self, self._groups, item, snapshot, size)

    def opening(self, item: TaskItem | int | str) -> Observation:
        """What every rollout of a group of ``item`` is shown first (no rollout is made)."""
        if not isinstance(item, TaskItem):
            item = self.source[item]
        with self._lock:
            slot = self._acquire()
            try:
                snapshot = start_snapshot(self.executor, item, slot)
                self.executor.restore(slot, snapshot)
                turn = ChatSession().open(build_input(slot, self.executor.agent_view(slot), dict(snapshot.memory)))
                return Observation(turn.messages, turn.tools, world_digest(self.engine.sim.save_slot(slot).state))
            finally:
                self._free.appendleft(slot)

    # -- rollouts ------------------------------------------------------------------------------
    def _acquire(self) -> int:
        if not self._free:
            raise UserError(f"all {self.num_slots} slots run rollouts: end or finish some first, "
                            "or make the environment with more slots")
        return self._free.popleft()

    def _reset(self, rollouts: Iterable[Rollout]) -> list[Observation]:
        observations = []
        with self._lock:
            for rollout in rollouts:
                if not rollout.done:
                    self._end(rollout, "reset while running")
                slot = self._acquire()
                try:
                    if rollout.group.snapshot is None:
                        rollout.group.snapshot = start_snapshot(self.executor, rollout.group.item, slot)
                    snapshot = rollout.group.snapshot
                    self.executor.restore(slot, snapshot)
                except BaseException:
                    self._free.appendleft(slot)
                    raise
                rollout.slot = slot
                rollout.digest = world_digest(self.engine.sim.save_slot(slot).state)
                rollout.done, rollout.reward, rollout.record, rollout.episode = False, 0.0, None, None
                rollout._decisions, rollout._idle, rollout._agent_steps = 0, 0, []
                rollout._memory = dict(snapshot.memory)
                rollout.session = ChatSession()
                view = self.executor.agent_view(slot)
                rollout._text_only = view.text_only
                rollout.agent_input = build_input(slot, view, rollout._memory)
                turn = rollout.session.open(rollout.agent_input)
                self._running[slot] = rollout
                rollout._asked = time.perf_counter()
                observations.append(Observation(turn.messages, turn.tools, rollout.digest))
        return observations

    def step(self, pairs: Mapping[Rollout, Any]) -> dict[Rollout, StepResult]:
        """Step several rollouts (of any groups) with their assistant message, in one submit."""
        with self._lock:
            now = time.perf_counter()
            decisions: dict[int, Any] = {}
            errors: dict[int, DecisionError] = {}
            for rollout, message in pairs.items():
                if rollout.done or rollout.slot is None:
                    raise UserError(f"rollout {rollout.index} of group {rollout.group.number} is not "
                                    "running: reset it first")
                decision = rollout.session.decide(message)
                if isinstance(decision, DecisionError):
                    errors[rollout.slot] = decision
                rollout._decisions += 1
                acted = isinstance(decision, Decision) and bool(decision.tool_calls)
                rollout._idle = self.limits.idle_after(rollout._idle, acted, rollout._text_only)
                rollout._agent_steps.append({"decision": rollout._decisions,
                                             "latency_s": round(now - rollout._asked, 6)})
                decisions[rollout.slot] = decision
            outcomes = self.executor.submit(decisions)
            results = {}
            for rollout in pairs:
                slot = rollout.slot
                assert slot is not None
                outcome = outcomes[slot]
                info = {"status": outcome.status, "stage_index": outcome.next_view.stage_index,
                        "num_stages": outcome.next_view.num_stages,
                        "calls": [{"tool": c.tool, "ok": c.ok, "message": c.message} for c in outcome.calls],
                        "decision_error": None if slot not in errors else errors[slot].to_dict()}
                done = self._should_end(rollout)
                view = self.executor.agent_view(slot)
                rollout._text_only = view.text_only
                rollout.agent_input = build_input(slot, view, rollout._memory)
                messages = rollout.session.next_input(rollout.agent_input).messages
                if done:
                    self._finish(rollout)
                    info.update(status=rollout.record["status"], episode=rollout.episode,
                                reward_terms=rollout.record["rl"]["reward_terms"])
                rollout._asked = time.perf_counter()
                results[rollout] = StepResult(messages, rollout.reward if done else 0.0, done, info)
            return results

    def _should_end(self, rollout: Rollout) -> bool:
        slot = rollout.slot
        assert slot is not None
        status = self.executor.status(slot)
        if status == JUDGE_UNAVAILABLE:
            raise AgentOutage(self.executor.record(slot).reason)
        if status != "running":
            return True
        end = self.limits.end_of(rollout._idle, rollout._decisions)  # the run loop's limits
        if end is not None:  # with the run loop's reason, naming the episode's failed calls
            steps = self.executor.record(slot).steps
            self.executor.end_episode(slot, end[0], with_failed_calls(end[1], steps))
        return end is not None

    def _end(self, rollout: Rollout, reason: str) -> None:
        with self._lock:
            if rollout.done or rollout.slot is None:
                return
            self.executor.end_episode(rollout.slot, TRUNCATED, reason)
            self._finish(rollout)

    def _finish(self, rollout: Rollout) -> None:
        """Score and store a rollout whose episode is over; free its slot."""
        slot = rollout.slot
        assert slot is not None
        record = self.executor.record(slot)
        document = record.to_dict()
        group = rollout.group
        document["rl"] = {"group": group.number, "rollout": rollout.index, "item": group.item.id,
                          "start_digest": rollout.digest, "source": self.source.name,
                          **({"start": group.item.start.origin} if group.item.start else {})}
        rollout.reward, terms = score(self.reward, document)
        document["rl"].update(reward=rollout.reward, reward_terms=terms)
        agent = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                 "calls": rollout._decisions,
                 "latency_s": round(sum(s["latency_s"] for s in rollout._agent_steps), 6),
                 "per_decision": rollout._agent_steps}
        document["episode"] = self._next_episode
        document["agent_memory"] = {"history": rollout.session.history}
        document["agent"] = agent
        if self.store is not None:
            summary = episode_summary(self._next_episode, record.seed, record, agent)
            self.store.save_episode(self.name, summary, document, episode_rows(record))
        rollout.episode = self._next_episode
        self._next_episode += 1
        rollout.record = document
        rollout.done = True
        rollout.slot = None
        del self._running[slot]
        self._free.append(slot)

    # -- async -------------------------------------------------------------------------------
    def _batcher(self) -> StepBatcher:
        if self._async is None:
            self._async = StepBatcher(self)
        return self._async

    def close(self) -> None:
        """End the running rollouts (stored as ``truncated``), then close the engine and store."""
        with self._lock:
            for rollout in list(self._running.values()):
                self._end(rollout, "the environment was closed")
            self.executor.close()
            if self.store is not None:
                self.store.close()
                self.store = None

    def __enter__(self) -> TrainingEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _store_file(out: str | Path) -> Path:
    path = Path(out) / STORE_FILE
    open_store(out).close()  # opened (and created) once the ordinary way first; one-line errors
    return path


