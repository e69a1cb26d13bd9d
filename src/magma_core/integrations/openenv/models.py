"""The OpenEnv wire types of the MAGMA environment: its action, observation and state.

An action is the model's reply as an OpenAI assistant message (``content`` and ``tool_calls``)
or ``end=True`` to stop the rollout (stored as ``truncated``). An observation is the new chat
messages the rl env answers with (on reset: the whole opening, system message first), the tool
schemas, the world digest of the start, the step's ``status`` / ``stage_index`` / ``calls`` /
``decision_error``, and its ``credit`` (:mod:`magma_core.integrations.openenv.mapping`).
The state is the session's rollout: its item, group and member index, its credits so far and,
once the whole group has ended, every member's reward and group-relative advantage.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class MagmaAction(Action):
    """The model's reply: an assistant message's ``content`` and OpenAI ``tool_calls``
    (arguments as a JSON string or an object); ``end``: stop the rollout now (truncated)."""

    content: str = Field(default="", description="The assistant message's text")
    tool_calls: list[dict[str, Any]] = Field(
        default_factory=list, description="OpenAI tool calls: {id, type, function: {name, arguments}}")
    end: bool = Field(default=False, description="End the rollout now (stored as truncated)")


class MagmaObservation(Observation):
    """What the rl env answers (``reward`` and ``done`` as OpenEnv's base class holds them)."""

    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="New chat messages (on reset: the opening, system first)")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Function schemas offered")
    digest: str = Field(default="", description="SHA-256 of the rollout's start world state")
    status: str = Field(default="running", description="The episode's status after the step")
    stage_index: int = Field(default=0, description="The stage the episode is at")
    num_stages: int = Field(default=0, description="The stages the engine runs")
    calls: list[dict[str, Any]] = Field(default_factory=list, description="The step's tool calls: tool, ok, message")
    decision_error: dict[str, Any] | None = Field(default=None, description="Why the reply was no decision")
    credit: float = Field(default=0.0, description="The step's share of the rollout's reward")


class MagmaState(State):
    """The session's rollout (``episode_id``: its item, group and member; ``step_count``)."""

    item: str | None = None
    group: str | None = None
    group_number: int | None = None
    member: int | None = None
    digest: str = ""
    done: bool = True
    status: str = "not started"
    reward: float | None = None
    episode: int | None = Field(default=None, description="The rollout's episode in the run store")
    start_credit: float = 0.0
    credits: list[float] = Field(default_factory=list)
    group_rewards: list[float | None] = Field(default_factory=list)
    group_advantages: list[float] | None = None
