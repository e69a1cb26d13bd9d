"""What a trainer holds of the live environment: a :class:`Group` of G :class:`Rollout` s that
start from one snapshot, the :class:`Observation` each opens with and the :class:`StepResult`
each step answers. The handles keep a rollout's conversation and counters; every reset, step
and end is the :class:`~magma_core.rl.env.TrainingEnv`'s, which owns the engine and the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from magma_core.protocol.agent import AgentInput
from magma_core.rl.chat import ChatSession
from magma_core.rl.tasks import TaskItem
from magma_core.simulation.data_structures import Decision
from magma_core.simulation.executor.snapshots import SlotSnapshot

if TYPE_CHECKING:
    from magma_core.rl.env import TrainingEnv


@dataclass
class Observation:
    """What a rollout's model sees first: the opening chat ``messages`` (system message first)
    and the ``tools`` (function schemas); ``digest``: the slot's world state at the start."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    digest: str


@dataclass
class StepResult:
    """The environment's answer to one assistant message: the reply ``messages`` (tool
    results and the next instruction, as ``tool``/``user`` messages), the ``reward`` (0.0 until
    the step that ends the rollout), ``done``, and ``info`` (``status``, ``stage_index``,
    ``num_stages``, ``calls``, ``decision_error``; when done ``episode``, ``reward_terms``)."""

    messages: list[dict[str, Any]]
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)


class Rollout:
    """One rollout of a group (see the module doc); made by :meth:`TrainingEnv.group`."""

    def __init__(self, group: Group, index: int) -> None:
        self.group = group
        self.index = index
        self.slot: int | None = None
        self.session = ChatSession()
        self.done = True  # until reset
        self.reward = 0.0
        self.record: dict[str, Any] | None = None  # the stored record, once done
        self.episode: int | None = None  # its index in the run store, once done
        self.digest = ""
        #: The run loop's input for the next decision (its stage under ``extra_keys["stage"]``):
        #: what the ``openai:`` agent would decode for (offered tools, ``tool_choice``).
        self.agent_input: AgentInput | None = None
        self._decisions = 0
        self._idle = 0
        self._text_only = False
        self._memory: dict[str, Any] = {}
        self._agent_steps: list[dict[str, Any]] = []
        self._asked = 0.0

    @property
    def env(self) -> TrainingEnv:
        return self.group.env

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole conversation so far (system message first)."""
        return self.session.messages

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.session.tools

    def reset(self) -> Observation:
        """(Re)start this rollout from its group's start (a running one is ended first)."""
        return self.env._reset([self])[0]

    def step(self, message: Any) -> StepResult:
        """Execute the decision of ``message`` (an OpenAI assistant message, or raw text)."""
        return self.env.step({self: message})[self]

    async def astep(self, message: Any) -> StepResult:
        """:meth:`step` for trainers that generate concurrently: steps of rollouts that arrive
        in the same event-loop turn are executed together."""
        return await self.env._batcher().step(self, message)

    def end(self, reason: str = "ended by the trainer") -> None:
        """End a running rollout now (status ``truncated``) and store it."""
        self.env._end(self, reason)

    def message_for(self, decision: Decision) -> dict[str, Any]:
        """The assistant message making ``decision`` here (for scripted policies)."""
        return self.session.message_for(decision)


class Group:
    """G rollouts that start from one snapshot of ``item``'s situation."""

    def __init__(self, env: TrainingEnv, number: int, item: TaskItem, snapshot: SlotSnapshot | None, size: int) -> None:
        self.env = env
        self.number = number
        self.item = item
        self.snapshot = snapshot
        self.rollouts = [Rollout(self, i) for i in range(size)]

    def __len__(self) -> int:
        return len(self.rollouts)

    def __getitem__(self, index: int) -> Rollout:
        return self.rollouts[index]

    @property
    def done(self) -> bool:
        return all(r.done for r in self.rollouts)

    @property
    def digests(self) -> list[str]:
        return [r.digest for r in self.rollouts]

    def reset(self) -> list[Observation]:
        """Start every rollout (see :meth:`Rollout.reset`)."""
        return self.env._reset(self.rollouts)

    def step(self, messages: Sequence[Any]) -> list[StepResult | None]:
        """Step the running rollouts with their message (None: skip), in one submit."""
        if len(messages) != len(self.rollouts):
            raise ValueError(f"{len(messages)} messages for a group of {len(self.rollouts)}")
        pairs = {r: m for r, m in zip(self.rollouts, messages, strict=True) if m is not None and not r.done}
        results = self.env.step(pairs)
        return [results.get(r) for r in self.rollouts]

    async def astep(self, messages: Sequence[Any]) -> list[StepResult | None]:
        """:meth:`step` from a coroutine (executed with whatever else arrives with it)."""
        pairs = [(r, m) for r, m in zip(self.rollouts, messages, strict=True) if m is not None and not r.done]
        results = dict(zip([r for r, _ in pairs], await asyncio.gather(*(r.astep(m) for r, m in pairs)), strict=True))
        return [results.get(r) for r in self.rollouts]

    def close(self) -> None:
        """End the rollouts still running (stored as ``truncated``)."""
        for rollout in self.rollouts:
            if not rollout.done:
                rollout.end("the group was closed")
