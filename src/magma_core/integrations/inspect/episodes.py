"""The MAGMA side of the Inspect bridge: a suite's trials driven through the live environment.

:class:`SuiteEpisodes` holds a compiled suite and, opened on first use, one
:class:`~magma_core.rl.TrainingEnv` per group of items sharing a world (the groups ``magma
bench run`` makes, :func:`~magma_core.bench.episodes.engine_groups`). :meth:`SuiteEpisodes.run`
plays one trial: the item's frozen task from the trial's seed in a slot of its own, asking
``generate(messages, tools, tool_choice)`` for each decision (the chat messages, the stage's
function schemas and ``tool_choice`` the ``openai:`` agent would send, :func:`offer`) and
handing each reply to the engine. Nothing here knows Inspect:
its solver passes a ``generate`` that calls Inspect's model, and tests pass a scripted one.

Concurrency: each engine has ``slots`` slots, and a trial holds one from its reset to its last
decision; trials beyond that wait for a free slot (Inspect's ``max_samples`` may be larger:
those samples wait here, none shares a slot). Decisions of trials that arrive in the same
event-loop turn are executed in one engine submit, as ``magma bench run`` executes the
decisions that arrive together. With ``out``, every trial is also stored in MAGMA's run store
(``out/magma.db``, run ``inspect.<suite>``), so ``magma view`` shows it.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from magma_core.agents.base import robot_names
from magma_core.agents.chat_prompt import tool_schemas
from magma_core.agents.stage_decoding import callable_tools, stage_of, tool_choice
from magma_core.bench.episodes import check_items, engine_groups
from magma_core.bench.suite import Suite, load_suite
from magma_core.integrations.inspect.mapping import (
    episode_summary,
    sample_fields,
    step_event,
    trial_seed,
)
from magma_core.protocol.agent import AgentInput
from magma_core.rl import TaskItem, TaskSource, TrainingEnv
from magma_core.runs import LoopLimits
from magma_core.user_error import UserError

#: ``generate(messages, tools, tool_choice)``: the assistant message (an OpenAI message dict)
#: answering ``messages`` (the whole conversation, system message first) with ``tools``
#: (function schemas) offered under ``tool_choice`` (OpenAI's; None without tools).
Generate = Callable[[list[dict[str, Any]], list[dict[str, Any]], Any], Awaitable[dict[str, Any]]]
StepListener = Callable[[dict[str, Any]], None]
#: ``on_end(summary, conversation)``: told when a trial's episode is over, however it ended.
EndListener = Callable[[dict[str, Any], list[dict[str, Any]]], None]
#: How a trial that did not reach the end of its episode is stored (the rl env's status).
ENDED_EARLY = "ended before the episode did: the Inspect sample stopped (limit, error or cancel)"


class SuiteEpisodes:
    """The trials of the compiled suite in ``suite`` (see the module doc).

    ``seed``: trial ``k`` (Inspect epoch ``k + 1``) starts from ``seed + k``, as ``magma bench
    run --seed`` does. ``slots``: trials side by side per engine. ``out``: a run-store folder
    (None: nothing stored but the Inspect log). ``judge``/``backend``/``limits``: as ``magma
    bench run``'s ``--judge``, ``--backend`` and loop limits.
    """

    def __init__(self, suite: str | Path, *, seed: int = 0, slots: int = 2, out: str | Path | None = None,
                 judge: str | None = None, backend: str = "auto", limits: LoopLimits | None = None) -> None:
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            raise UserError(f"slots must be a positive integer, got {slots!r}")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise UserError(f"seed must be an integer >= 0, got {seed!r}")
        self.suite: Suite = load_suite(suite)
        check_items(self.suite.items, judge)  # a judged stage without --judge: one line, now
        self.seed, self.slots, self.out, self.judge, self.backend = seed, slots, out, judge, backend
        self.limits = limits or LoopLimits()
        self.groups = engine_groups(self.suite.items)
        self._group_of = {self.suite.items[i]["item_id"]: g for g, members in enumerate(self.groups)
                          for i in members}
        self._sources: dict[int, TaskSource] = {}
        self._envs: dict[int, TrainingEnv] = {}
        self._free: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}
        self._lock = threading.Lock()
        atexit.register(_close_at_exit, weakref.ref(self))

    def samples(self) -> list[dict[str, Any]]:
        """Every item's ``Sample`` fields, in suite order (:func:`~.mapping.sample_fields`)."""
        return [sample_fields(item) for item in self.suite.items]

    def run_name(self, group: int) -> str:
        """The run-store run of a group's trials: ``inspect.<suite>`` (``.<group>`` after the first)."""
        return f"inspect.{self.suite.name}" + (f".{group}" if group else "")

    # -- one trial ---------------------------------------------------------------------------
    async def run(self, item_id: str, epoch: int, generate: Generate, on_step: StepListener | None = None,
                  on_end: EndListener | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Play trial ``epoch - 1`` of ``item_id``; ``(summary, conversation)``: the episode's
        :func:`~.mapping.episode_summary` and its chat messages. ``on_step`` is told each
        executed decision (:func:`~.mapping.step_event`), ``on_end`` the summary and messages
        however the trial ends: one stopped before its episode ended (an exception, a limit,
        a cancel) is ended and stored as ``truncated``."""
        group = self._group_of.get(item_id)
        if group is None:
            raise UserError(f"suite {self.suite.name} has no item {item_id!r}")
        env = await asyncio.to_thread(self._env, group)
        item = self._item(group, item_id, trial_seed(self.seed, epoch))
        async with self._slot(group):
            rollout = (await asyncio.to_thread(env.group, item, 1))[0]
            # shielded: a cancel while the reset runs leaves it to finish, then ends the rollout
            reset = asyncio.ensure_future(asyncio.to_thread(rollout.reset))
            try:
                await asyncio.shield(reset)
                decisions = 0
                while not rollout.done:
                    assert rollout.agent_input is not None
                    reply = await generate(rollout.messages, *offer(rollout.agent_input))
                    result = await rollout.astep(reply)
                    decisions += 1
                    if on_step is not None:
                        on_step(step_event(result.info, decisions))
            finally:
                if not reset.done():
                    reset.add_done_callback(lambda _: rollout.end(ENDED_EARLY))
                elif not rollout.done and rollout.slot is not None:  # synchronous: even while cancelled
                    rollout.end(ENDED_EARLY)
                if rollout.record is not None and on_end is not None:
                    on_end(episode_summary(rollout.record), list(rollout.messages))
            assert rollout.record is not None
            return episode_summary(rollout.record), list(rollout.messages)

    def _item(self, group: int, item_id: str, seed: int) -> TaskItem:
        base = self._sources[group][f"{item_id}@{self.seed}"]
        return TaskItem(f"{item_id}@{seed}", base.task, seed, meta={**base.meta, "seed": seed})

    def _env(self, group: int) -> TrainingEnv:
        """The engine of ``group``, opened on first use (in a worker thread: it loads the simulator)."""
        with self._lock:
            env = self._envs.get(group)
            if env is None:
                ids = [self.suite.items[i]["item_id"] for i in self.groups[group]]
                source = TaskSource.suite(self.suite, ids, seeds=[self.seed])
                env = TrainingEnv(source, slots=self.slots, out=self.out or ".", name=self.run_name(group),
                                  limits=self.limits, judge=self.judge, backend=self.backend,
                                  store=self.out is not None)
                self._sources[group], self._envs[group] = source, env
            return env

    def _slot(self, group: int) -> asyncio.Semaphore:
        """The free slots of ``group``'s engine, for the running event loop (a new ``eval()``
        runs in a new loop)."""
        loop = asyncio.get_running_loop()
        held = self._free.get(group)
        if held is None or held[0] is not loop:
            held = (loop, asyncio.Semaphore(self.slots))
            self._free[group] = held
        return held[1]

    def close(self) -> None:
        """Close every engine (and the run store): running trials are stored as ``truncated``."""
        with self._lock:
            envs, self._envs, self._sources = self._envs, {}, {}
        for env in envs.values():
            env.close()

    def __enter__(self) -> SuiteEpisodes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def offer(agent_input: AgentInput) -> tuple[list[dict[str, Any]], Any]:
    """``(tools, tool_choice)`` the ``openai:`` agent offers for ``agent_input`` with its
    default options (stage-aware decoding on): the function schemas of the tools the stage
    lets the agent call, and ``tool_choice`` for the stage (``required``, or the one tool by
    name, on an action stage; ``auto`` elsewhere; None without tools)."""
    stage = stage_of(agent_input.extra_keys)
    robots = robot_names(agent_input.attributes)
    schemas, _, _ = tool_schemas(callable_tools(agent_input.tools, stage), robots, agent_input.attributes)
    return schemas, tool_choice(stage, schemas, True)


def _close_at_exit(ref: weakref.ref[SuiteEpisodes]) -> None:
    episodes = ref()
    if episodes is not None:
        episodes.close()
