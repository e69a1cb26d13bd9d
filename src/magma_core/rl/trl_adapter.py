"""TRL adapter: ``GRPOTrainer(environment_factory=...)`` over a :class:`TrainingEnv`.

TRL 1.x runs multi-turn environments so: one environment instance per rollout, made by
``environment_factory()``; ``reset(**row)`` before each rollout (``row``: the dataset example);
every public method is a tool the model may call (its name, typed signature and Google-style
docstring become the function schema); a tool's return value is the ``tool`` message; the
rollout ends when the model answers without a tool call; ``get_reward()`` scores it. Here::

    from trl import GRPOConfig, GRPOTrainer
    from magma_core.rl import TaskSource, TrainingEnv
    from magma_core.rl.trl_adapter import MagmaTRL

    env = TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0, 1]), slots=8)
    magma = MagmaTRL(env, num_generations=4)
    trainer = GRPOTrainer(model, args=GRPOConfig(num_generations=4, ...),
                          train_dataset=magma.dataset(), processing_class=tokenizer,
                          environment_factory=magma.factory)

- ``magma.dataset()`` has one row per task item: ``prompt`` (the opening messages every
  rollout of that item sees, tools aside: TRL's chat template adds them) and ``item``.
- Each instance's ``reset(item=...)`` takes the next rollout of that item's open group: the
  ``num_generations`` rollouts TRL makes of one prompt are one group, restored from one
  snapshot (bit-identical starts; the digests are in the store).
- Every tool of the task is a method; each call is one decision (``rollout.step``) and returns
  the environment's reply (the report on the call and the next instruction). ``answer(text)``
  answers the user (the decision of a text-only stage), since TRL ends a rollout at a reply
  without a tool call.
- ``get_reward()`` ends a rollout still running (``truncated``; stored) and returns its
  reward from the engine's verdicts (:mod:`magma_core.rl.rewards`).

TRL calls tools one rollout after another, so here decisions of different rollouts are not
executed together (use the environment's ``step``/``astep`` directly, or ``rollout_func``, for
that). Only this module imports TRL's world (datasets); the optional extra is ``magma[rl]``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from datasets import Dataset

from magma_core.rl.env import Group, Rollout, TrainingEnv
from magma_core.user_error import UserError

ANSWER_TOOL = "answer"
_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


class MagmaTRL:
    """The bridge between one :class:`TrainingEnv` and TRL's ``GRPOTrainer`` (see the module)."""

    def __init__(self, env: TrainingEnv, num_generations: int) -> None:
        if any(item.randomization is not None for item in env.source):
            raise UserError("the TRL adapter needs one set of tool names: TRL reads the tools from the "
                            "environment class once; use a source without randomized names")
        self.env = env
        self.num_generations = num_generations
        self.opening = {item.id: env.opening(item) for item in env.source}
        first = self.opening[env.source[0].id]
        self.tool_schemas = first.tools
        self._open: dict[str, Group] = {}
        self._taken: dict[str, int] = {}
        self.rollouts: list[Rollout] = []  # every rollout handed to TRL, in order
        self.factory = _environment_class(self)

    def dataset(self) -> Dataset:
        """One row per task item: its opening ``prompt`` and its ``item`` id."""
        rows = [{"prompt": [{"role": m["role"], "content": m["content"]} for m in obs.messages],
                 "item": item_id} for item_id, obs in self.opening.items()]
        return Dataset.from_list(rows)

    def take(self, item_id: str) -> Rollout:
        """The next rollout of ``item_id``'s open group (a new group when it is used up)."""
        group = self._open.get(item_id)
        if group is None or self._taken[item_id] >= len(group):
            group = self.env.group(item_id, size=self.num_generations)
            self._open[item_id], self._taken[item_id] = group, 0
        rollout = group[self._taken[item_id]]
        self._taken[item_id] += 1
        rollout.reset()
        self.rollouts.append(rollout)
        return rollout


def _reply_text(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(str(m.get("content") or "") for m in messages if m.get("content")) or "Done."


def _environment_class(bridge: MagmaTRL) -> Callable[[], Any]:
    """A class whose methods are the task's tools (TRL reads tools from the class)."""

    class MagmaEnvironment:
        """One rollout of a MAGMA task at a time (TRL reuses instances across batches)."""

        def __init__(self) -> None:
            self.rollout: Rollout | None = None

        def reset(self, **row: Any) -> None:
            if self.rollout is not None and not self.rollout.done:
                self.rollout.end("TRL reset the environment")
            self.rollout = bridge.take(str(row.get("item", bridge.env.source[0].id)))
            return None  # the prompt already holds the opening messages

        def get_reward(self) -> float:
            if self.rollout is None:
                return 0.0
            if not self.rollout.done:
                self.rollout.end("the model ended its turn")
            return float(self.rollout.reward)

        def _act(self, message: dict[str, Any]) -> str:
            if self.rollout is None:
                return "The environment was not reset."
            if self.rollout.done:
                return "The episode is over."
            return _reply_text(self.rollout.step(message).messages)

    names = set()
    for schema in bridge.tool_schemas:
        function = schema["function"]
        setattr(MagmaEnvironment, function["name"], tool_method(function))
        names.add(function["name"])
    if ANSWER_TOOL not in names:
        setattr(MagmaEnvironment, ANSWER_TOOL, answer_method())
    return MagmaEnvironment


def tool_method(function: dict[str, Any]) -> Callable[..., str]:
    """A method named after ``function`` whose signature and docstring give TRL its schema;
    every call becomes a one-call decision (bad arguments are the engine's failed calls),
    made by the instance's ``_act(message)`` (also used by the OpenEnv bridge's TRL path)."""
    name = function["name"]
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])

    def tool(self, **arguments: Any) -> str:  # noqa: ANN001 - no hint: TRL skips an unhinted self
        call = {"id": f"call_{name}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, default=str)}}
        return self._act({"role": "assistant", "content": "", "tool_calls": [call]})

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    lines = [function.get("description") or name, "", "Args:"]
    for pname, prop in properties.items():
        kind = _PY_TYPES.get(prop.get("type"), str)
        default = inspect.Parameter.empty if pname in required else None
        params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind))
        annotations[pname] = kind
        described = prop.get("description") or pname
        if prop.get("enum"):
            described += f" (one of: {', '.join(map(str, prop['enum']))})"
        lines.append(f"    {pname}: {described}")
    if not properties:
        lines = lines[:1]
    lines += ["", "Returns:", "    The environment's report on the call."]
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = "\n".join(lines)
    tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


def answer_method() -> Callable[..., str]:
    """The ``answer(text)`` method: a reply without a tool call, through ``self._act``."""

    def answer(self, text: str) -> str:  # noqa: ANN001 - no hint: TRL skips an unhinted self
        """Answer the user with a message (when the task is done, or the user asked a question).

        Args:
            text: the message to the user

        Returns:
            The environment's report on the answer.
        """
        return self._act({"role": "assistant", "content": str(text)})

    return answer
