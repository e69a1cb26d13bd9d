"""TRL over OpenEnv: ``GRPOTrainer(environment_factory=...)`` whose environments are OpenEnv
clients of a served MAGMA environment (:mod:`.server`), as TRL's OpenEnv recipes run them.

::

    from trl import GRPOConfig, GRPOTrainer
    from magma_core.integrations.openenv.trl_adapter import OpenEnvTRL

    bridge = OpenEnvTRL("http://127.0.0.1:8000")
    trainer = GRPOTrainer(model, args=GRPOConfig(num_generations=4, ...),
                          train_dataset=bridge.dataset(), processing_class=tokenizer,
                          environment_factory=bridge.factory)

- ``bridge.dataset()``: one row per item, its opening ``prompt`` (system and user messages;
  TRL's chat template adds the tools) and its ``item`` id, read from ``/magma/items``.
- ``bridge.factory``: a class whose methods are the task's tools (the same schemas-to-methods
  as :mod:`magma_core.rl.trl_adapter`), each call one ``step`` of the instance's OpenEnv session;
  ``reset(item=...)`` resets the session without a group key, so the server puts the
  ``num_generations`` rollouts TRL makes of one prompt into one group (one start snapshot);
  ``get_reward()`` ends a rollout still running (``end``) and returns the reward the server
  scored from the engine's verdicts. Each instance opens its session at its first reset.
- ``bridge.results``: what each rollout ended with (item, group, member, episode, reward, digest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datasets import Dataset

from magma_core.integrations.openenv.client import MagmaEnvClient, items
from magma_core.integrations.openenv.mapping import reply_text
from magma_core.integrations.openenv.models import MagmaAction
from magma_core.rl.trl_adapter import ANSWER_TOOL, answer_method, tool_method
from magma_core.user_error import UserError


class OpenEnvTRL:
    """The bridge between a served MAGMA environment at ``base_url`` and TRL's GRPOTrainer."""

    def __init__(self, base_url: str, message_timeout_s: float = 600.0) -> None:
        self.base_url = base_url
        self.message_timeout_s = message_timeout_s
        self.items = items(base_url)
        if not self.items:
            raise UserError(f"the server at {base_url} lists no items")
        tools = [item["tools"] for item in self.items]
        if any(t != tools[0] for t in tools):
            raise UserError("TRL reads the tools from the environment class once: the served items "
                            "must offer the same tools (serve a source without randomized names)")
        self.tool_schemas = tools[0]
        self.results: list[dict[str, Any]] = []
        self.factory = _environment_class(self)

    def dataset(self) -> Dataset:
        """One row per item: its opening ``prompt`` and its ``item`` id."""
        return Dataset.from_list([
            {"prompt": [{"role": m["role"], "content": m["content"]} for m in item["messages"]],
             "item": item["id"]} for item in self.items])

    def client(self) -> Any:
        return MagmaEnvClient(base_url=self.base_url, message_timeout_s=self.message_timeout_s).sync()


def _environment_class(bridge: OpenEnvTRL) -> Callable[[], Any]:
    """A class whose methods are the served task's tools (TRL reads tools from the class)."""

    class MagmaOpenEnvEnvironment:
        """One OpenEnv session; one rollout at a time (TRL reuses instances across batches)."""

        def __init__(self) -> None:
            self._client: Any = None
            self._done = True
            self._reward = 0.0
            self._metadata: dict[str, Any] = {}

        def reset(self, **row: Any) -> None:
            if self._client is None:
                self._client = bridge.client()
                self._client.connect()
            result = self._client.reset(item=str(row.get("item", bridge.items[0]["id"])))
            self._done, self._reward = False, 0.0
            self._metadata = dict(result.metadata or {})
            return None  # the prompt already holds the opening messages

        def get_reward(self) -> float:
            if self._client is None:
                return 0.0
            if not self._done:
                self._take(self._client.step(MagmaAction(end=True)))
            return self._reward

        def _act(self, message: dict[str, Any]) -> str:
            if self._client is None:
                return "The environment was not reset."
            if self._done:
                return "The episode is over."
            result = self._client.step(MagmaAction(content=str(message.get("content") or ""),
                                                   tool_calls=message.get("tool_calls") or []))
            self._take(result)
            return reply_text(result.observation.messages)

        def _take(self, result: Any) -> None:
            self._metadata.update(result.metadata or {})
            if result.done:
                self._done = True
                state = self._client.state()
                self._reward = float(state.reward or 0.0)
                bridge.results.append({"item": state.item, "group": state.group, "group_number": state.group_number,
                                       "member": state.member, "episode": state.episode,
                                       "reward": self._reward, "digest": state.digest,
                                       "credits": list(state.credits), "start_credit": state.start_credit})

        def __del__(self) -> None:
            client, self._client = self._client, None
            if client is not None:
                try:
                    client.close()
                except Exception:  # noqa: BLE001 - best effort at teardown
                    pass

    names = set()
    for schema in bridge.tool_schemas:
        function = schema["function"]
        setattr(MagmaOpenEnvEnvironment, function["name"], tool_method(function))
        names.add(function["name"])
    if ANSWER_TOOL not in names:
        setattr(MagmaOpenEnvEnvironment, ANSWER_TOOL, answer_method())
    return MagmaOpenEnvEnvironment
