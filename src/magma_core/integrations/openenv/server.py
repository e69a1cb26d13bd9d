"""The ``rl`` environment served as an OpenEnv environment: one engine, several sessions.

::

    from magma_core.rl import TaskSource, TrainingEnv
    from magma_core.integrations.openenv.server import MagmaOpenEnvServer, serve

    env = TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0, 1]), slots=4, out="runs")
    serve(MagmaOpenEnvServer(env, group_size=4), port=8000)    # ws://127.0.0.1:8000/ws

One :class:`~magma_core.rl.env.TrainingEnv` (its engine, slots and run store) serves every
session: OpenEnv makes a :class:`MagmaEnvironment` per WebSocket session, and each holds one
rollout at a time. ``reset(item=..., group=..., group_size=...)`` (or ``seed=``) joins the next
member of a group (:class:`~magma_core.integrations.openenv.mapping.GroupBook`), restored from
the group's one start snapshot, so the sessions of a group start from bit-identical worlds (the
observation's ``digest``). ``step`` goes through the rollout's ``astep``: steps that arrive
together from several sessions are executed together in one engine submit. Sessions are
capped at the engine's slots (each running rollout holds one). The server binds to loopback.

Also served: ``GET /magma/items``, each item's id, seed and opening (messages and tools, no
rollout made): what a trainer builds its prompts from (:mod:`.trl_adapter`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

import uvicorn
from fastapi import FastAPI
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from magma_core.integrations.openenv.mapping import (
    REWARD_MODES,
    GroupBook,
    OpenGroup,
    assistant_message,
    group_advantages,
    reset_options,
    start_potential,
    step_credit,
)
from magma_core.integrations.openenv.models import MagmaAction, MagmaObservation, MagmaState
from magma_core.rl.env import TrainingEnv
from magma_core.rl.rollouts import Rollout, StepResult
from magma_core.user_error import UserError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ENV_NAME = "magma"


class MagmaOpenEnvServer:
    """What every session shares: the rl env, the open groups, the items' openings.

    ``group_size``: members of a group when a reset does not say. ``reward_mode``:
    ``terminal`` (an observation's reward is the rl env's: 0.0 until the ending step) or
    ``credit`` (each step's credit; they add up to the same reward).
    """

    def __init__(self, env: TrainingEnv, *, group_size: int = 4, reward_mode: str = "terminal") -> None:
        if reward_mode not in REWARD_MODES:
            raise UserError(f"reward_mode must be one of {', '.join(REWARD_MODES)}, got {reward_mode!r}")
        self.env = env
        self.reward_mode = reward_mode
        self.book = GroupBook(lambda item, size: env.group(item, size), group_size)
        self._lock = threading.Lock()  # the book; the engine has its own lock
        self._openings: dict[str, dict[str, Any]] = {}

    def join(self, item: str, key: str | None, size: int | None) -> tuple[str, OpenGroup, int]:
        with self._lock:
            return self.book.join(item, key, size)

    def items(self) -> list[dict[str, Any]]:
        """Each item's ``id``, ``seed`` and opening ``messages`` and ``tools``."""
        out = []
        for item in self.env.source:
            if item.id not in self._openings:
                opening = self.env.opening(item)
                self._openings[item.id] = {"id": item.id, "seed": item.seed, "messages": opening.messages,
                                           "tools": opening.tools, "digest": opening.digest}
            out.append(self._openings[item.id])
        return out

    def app(self, max_sessions: int | None = None) -> FastAPI:
        """The OpenEnv FastAPI app (``/ws``, ``/reset``, ``/step``, ``/state``, ``/schema``,
        ``/health``) plus ``/magma/items``; ``max_sessions`` defaults to the engine's slots."""
        sessions = max_sessions if max_sessions is not None else self.env.num_slots
        app = create_app(functools.partial(MagmaEnvironment, self), MagmaAction, MagmaObservation,
                         env_name=ENV_NAME, max_concurrent_envs=sessions, state_cls=MagmaState)

        @app.get("/magma/items")
        def magma_items() -> list[dict[str, Any]]:
            return self.items()

        return app


class MagmaEnvironment(Environment[MagmaAction, MagmaObservation, MagmaState]):
    """One OpenEnv session: one rollout of the shared rl env at a time."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, server: MagmaOpenEnvServer) -> None:
        super().__init__()
        self.server = server
        self.rollout: Rollout | None = None
        self.key: str | None = None
        self.group: OpenGroup | None = None
        self.member: int | None = None
        self.phi = 0.0
        self.start_credit = 0.0
        self.credits: list[float] = []

    @property
    def env(self) -> TrainingEnv:
        return self.server.env

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=ENV_NAME, description=(
            f"MAGMA's rl environment over {self.env.source.name}: tool-calling robot tasks "
            "executed by the ManiSkill simulator, rewarded from the engine's verdicts"), version="1")

    # -- reset ---------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None, item: Any = None,
              group: Any = None, group_size: Any = None, **unknown: Any) -> MagmaObservation:
        """Join the next member of a group of ``item`` (an id or index; or the item of
        ``seed``) and start it from the group's snapshot (a running rollout is ended first)."""
        if unknown:
            raise UserError(f"reset does not take {', '.join(sorted(unknown))}: it takes item, seed, "
                            "group, group_size, episode_id")
        source = self.env.source
        options = reset_options(source.ids, [i.seed for i in source], item=item, seed=seed,
                                group=group, group_size=group_size)
        item_id = options.item if isinstance(options.item, str) else source.ids[options.item]
        if self.rollout is not None and not self.rollout.done:
            self._end("the session was reset")
        key, open_group, member = self.server.join(item_id, options.group, options.group_size)
        rollout = open_group.group[member]
        opening = rollout.reset()
        self.rollout, self.key, self.group, self.member = rollout, key, open_group, member
        slot = rollout.slot
        assert slot is not None
        self.phi = self.start_credit = start_potential(_stages(self.env, slot), self.env.reward)
        self.credits = []
        view = self.env.executor.agent_view(slot)
        return MagmaObservation(messages=opening.messages, tools=opening.tools, digest=opening.digest,
                                stage_index=view.stage_index, num_stages=view.num_stages,
                                reward=0.0, done=False, metadata=self._metadata())

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **options: Any) -> MagmaObservation:
        return await asyncio.to_thread(self.reset, seed, episode_id, **options)

    # -- step ----------------------------------------------------------------------------------
    def step(self, action: MagmaAction, timeout_s: float | None = None, **kwargs: Any) -> MagmaObservation:
        """Execute the action's assistant message as the rollout's next decision."""
        rollout = self._running()
        if action.end:
            return self._ended(rollout)
        slot = rollout.slot
        return self._observe(rollout.step(assistant_message(action.content, action.tool_calls)), slot)

    async def step_async(self, action: MagmaAction, timeout_s: float | None = None,
                         **kwargs: Any) -> MagmaObservation:
        """:meth:`step` through ``astep``: steps of several sessions that arrive together are
        executed together in one engine submit."""
        rollout = self._running()
        if action.end:
            return await asyncio.to_thread(self._ended, rollout)
        slot = rollout.slot
        result = await rollout.astep(assistant_message(action.content, action.tool_calls))
        return self._observe(result, slot)

    def _running(self) -> Rollout:
        rollout = self.rollout
        if rollout is None:
            raise UserError("reset this session first (plain HTTP /step keeps no session: use the "
                            "WebSocket client)")
        if rollout.done:
            raise UserError("the rollout is over: reset the session to start another")
        return rollout

    def _observe(self, result: StepResult, slot: int | None) -> MagmaObservation:
        rollout = self.rollout
        assert rollout is not None and slot is not None
        # The slot's stage records: this session alone steps its slot, so they stay as they are.
        stages = [] if result.done else _stages(self.env, slot)
        credit = self._credit(stages, result.done)
        info = result.info
        return MagmaObservation(
            messages=result.messages, status=info.get("status", "running"),
            stage_index=info.get("stage_index", 0), num_stages=info.get("num_stages", 0),
            calls=info.get("calls", []), decision_error=info.get("decision_error"), credit=credit,
            digest=rollout.digest, done=result.done,
            reward=credit if self.server.reward_mode == "credit" else result.reward,
            metadata=self._metadata(info))

    def _ended(self, rollout: Rollout) -> MagmaObservation:
        rollout.end("ended by the OpenEnv client")
        credit = self._credit([], True)
        record = rollout.record or {}
        return MagmaObservation(
            status=record.get("status", "truncated"), num_stages=len(record.get("stages", [])),
            credit=credit, digest=rollout.digest, done=True,
            reward=credit if self.server.reward_mode == "credit" else rollout.reward,
            metadata=self._metadata({"episode": rollout.episode,
                                     "reward_terms": (record.get("rl") or {}).get("reward_terms")}))

    def _credit(self, stages: list[dict[str, Any]], done: bool) -> float:
        rollout = self.rollout
        assert rollout is not None
        credit, self.phi = step_credit(self.phi, stages, self.env.reward, done, rollout.reward)
        self.credits.append(credit)
        if done and self.group is not None and self.member is not None:
            self.group.rewards[self.member] = rollout.reward
        return credit

    def _metadata(self, info: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"item": self.group.item if self.group else None, "group": self.key,
                               "member": self.member, "start_credit": self.start_credit}
        for name in ("episode", "reward_terms"):
            if info and info.get(name) is not None:
                out[name] = info[name]
        if self.group is not None:
            advantages = group_advantages(self.group.rewards)
            if advantages is not None:
                out["group_rewards"] = list(self.group.rewards)
                out["group_advantages"] = advantages
        return out

    # -- state and close -------------------------------------------------------------------------
    @property
    def state(self) -> MagmaState:
        rollout = self.rollout
        if rollout is None:
            return MagmaState()
        record = rollout.record or {}
        group = self.group
        return MagmaState(
            episode_id=f"{self.key}#{group.group.number}.{self.member}" if group else None,
            step_count=len(self.credits), item=group.item if group else None, group=self.key,
            group_number=group.group.number if group else None, member=self.member,
            digest=rollout.digest, done=rollout.done,
            status=record.get("status", "running") if rollout.done else "running",
            reward=rollout.reward if rollout.done else None, episode=rollout.episode,
            start_credit=self.start_credit, credits=list(self.credits),
            group_rewards=list(group.rewards) if group else [],
            group_advantages=group_advantages(group.rewards) if group else None)

    def _end(self, reason: str) -> None:
        rollout = self.rollout
        if rollout is not None and not rollout.done:
            rollout.end(reason)
            self._credit([], True)

    def close(self) -> None:
        """End a rollout still running (stored as ``truncated``) when the session goes."""
        self._end("the OpenEnv session closed")


def _stages(env: TrainingEnv, slot: int) -> list[dict[str, Any]]:
    """The stage records of ``slot``'s episode now (what step credit is read from)."""
    return [{"success": s.success, "state": s.state, "tool_calls": s.tool_calls}
            for s in env.executor.record(slot).stages]


def serve(server: MagmaOpenEnvServer, host: str = "127.0.0.1", port: int = 8000,
          max_sessions: int | None = None) -> None:
    """Serve ``server`` on ``host:port`` (loopback only) until interrupted."""
    if host not in LOOPBACK:
        raise UserError(f"the OpenEnv server binds to loopback only ({', '.join(LOOPBACK)}), not {host!r}")
    uvicorn.run(server.app(max_sessions), host=host, port=port, log_level="warning")
