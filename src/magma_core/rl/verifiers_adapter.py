"""verifiers adapter: a taskset plugin whose environment is a :class:`TrainingEnv`.

``verifiers`` (v1) loads a taskset by module path: this module exports one ``Taskset``
(:class:`MagmaTaskset`, one task per item of a :class:`~magma_core.rl.tasks.TaskSource`) and
one ``Env`` (:class:`MagmaEnv`), so ``--taskset.id magma_core.rl.verifiers_adapter`` with
``--taskset.target cube.PickPlace --taskset.seeds 0 1`` runs MAGMA episodes. As in verifiers'
TextArena environment, the engine plays the user: the task prompt is the rollout's opening,
each model reply is one decision, the environment's reply is the next user turn, and a
finished episode ends the exchange.

The model replies in text, so a tool call is written in it (the format of Hermes/Qwen chat
templates): ``<tool_call>{"name": "pick", "arguments": {"object": "cube"}}</tool_call>`` (one
or more), or a bare JSON object with ``name`` and ``arguments``; any other text is an answer
to the user. The rubric is our reward (:mod:`magma_core.rl.rewards`), recorded on the trace
as ``magma_reward`` with its terms under ``info``. Rollouts of one task that verifiers runs
together (``rollouts_per_example``) are one group from one snapshot (``group_size``), and their
steps that arrive together execute together (``Rollout.astep``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from magma_core.rl.env import Group, Rollout, TrainingEnv
from magma_core.rl.tasks import TaskSource

__all__ = ["MagmaConfig", "MagmaData", "MagmaEnv", "MagmaEnvConfig", "MagmaTask", "MagmaTaskset",
           "reply_message"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def reply_message(text: str) -> dict[str, Any]:
    """The assistant message a text reply makes: its ``<tool_call>`` blocks (or a bare JSON
    call) as tool calls, else the text itself (parsed on by :class:`~magma_core.rl.chat.ChatSession`)."""
    blocks = _TOOL_CALL.findall(text)
    if not blocks and text.strip().startswith("{"):
        blocks = [text.strip()]
    calls = []
    for i, block in enumerate(blocks):
        try:
            data = json.loads(block)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            calls.append({"id": f"call_{i}", "type": "function", "function": {"name": "", "arguments": block}})
            continue
        arguments = data.get("arguments", {})
        calls.append({"id": f"call_{i}", "type": "function", "function": {
            "name": data["name"], "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    if not calls:
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": _TOOL_CALL.sub("", text).strip() if blocks else "",
            "tool_calls": calls}


class MagmaConfig(vf.TasksetConfig):
    """Which MAGMA tasks: ``target`` (a preset or definition) with ``seeds``; ``out``/``name``:
    the run store and run the rollouts go to; ``slots``: engine slots; ``group_size``: rollouts
    per group (set it to verifiers' rollouts per example)."""

    target: str = "cube.PickPlace"
    seeds: list[int] = [0]
    randomized: bool = False
    out: str = "runs"
    run_name: str = "rl-verifiers"
    slots: int = 8
    group_size: int = 4


class MagmaData(vf.TaskData):
    info: dict
    """The task item's id in the source, and its group size."""


class MagmaTask(vf.Task[MagmaData, vf.State, vf.TaskConfig]):
    pass


class MagmaEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


_ENVS: dict[str, TrainingEnv] = {}  # one engine per configuration, per process
_GROUPS: dict[str, tuple[Group, int]] = {}


def training_env(config: dict[str, Any]) -> TrainingEnv:
    """The process's :class:`TrainingEnv` for a taskset configuration (made once)."""
    key = json.dumps(config, sort_keys=True)
    if key not in _ENVS:
        source = TaskSource.target(config["target"], config["seeds"], randomized=config["randomized"])
        _ENVS[key] = TrainingEnv(source, slots=config["slots"], out=config["out"], name=config["run_name"],
                                 backend="cpu")
    return _ENVS[key]


def take_rollout(env: TrainingEnv, item_id: str, size: int) -> Rollout:
    """The next rollout of ``item_id``'s open group (a new group when it is used up)."""
    key = f"{id(env)}:{item_id}"
    group, taken = _GROUPS.get(key, (None, size))
    if group is None or taken >= len(group):
        group, taken = env.group(item_id, size=size), 0
    _GROUPS[key] = (group, taken + 1)
    return group[taken]


def _settings(config: MagmaConfig) -> dict[str, Any]:
    return {k: getattr(config, k) for k in ("target", "seeds", "randomized", "out", "run_name", "slots")}


class MagmaTaskset(vf.Taskset[MagmaTask, MagmaConfig]):
    """One task per item of the configured source, prompted with the item's opening."""

    def load(self) -> Iterator[MagmaTask]:
        settings = _settings(self.config)
        env = training_env(settings)
        for item in env.source:
            opening = env.opening(item)
            system = opening.messages[0]["content"] + _tools_text(opening.tools)
            yield MagmaTask(MagmaData(name=item.id, id=item.id, system_prompt=system,
                                      prompt=[{"role": m["role"], "content": m["content"]}
                                              for m in opening.messages[1:]],
                                      info={"item": item.id, "settings": settings,
                                            "group_size": self.config.group_size}),
                            self.config.task)


def _tools_text(tools: list[dict[str, Any]]) -> str:
    listed = "\n".join(json.dumps(t["function"], sort_keys=True) for t in tools)
    return ("\nTools (call one as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>):\n"
            + listed)


class MagmaEnv(vf.Env[MagmaEnvConfig]):
    """Runs one MAGMA rollout per episode; the engine answers each reply."""

    async def run(self, task: Any, agents: Any) -> None:
        info = task.data.info
        env = training_env(info["settings"])
        rollout = take_rollout(env, info["item"], int(info["group_size"]))
        rollout.reset()
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                result = await rollout.astep(reply_message(segment.last_reply))
                if result.done:
                    break
                segment = await interaction.turn(_user_text(result.messages))
        if not rollout.done:
            rollout.end("the model's exchange ended")
        trace = interaction.trace
        trace.record_reward("magma_reward", rollout.reward, 1.0)
        trace.info["magma"] = {"status": rollout.record["status"], "episode": rollout.episode,
                               "start_digest": rollout.digest,
                               "reward_terms": rollout.record["rl"]["reward_terms"]}


def _user_text(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(str(m.get("content") or "") for m in messages if m.get("content")) or "Done."
