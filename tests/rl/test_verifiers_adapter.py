"""The verifiers taskset plugin: verifiers' own loader finds it, its tasks are the items'
openings, and its Env runs an episode on the real engine, scored by our reward.

The policy here is scripted (a stand-in for verifiers' model interaction, which needs a model
server); ``make test-rl`` runs the trainers with a real model."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

vf = pytest.importorskip("verifiers.v1", reason="the optional extra magma[rl] is not installed")

from verifiers.v1.utils.loaders import environment_class, taskset_class  # noqa: E402

from magma_core.rl.verifiers_adapter import MagmaConfig, reply_message  # noqa: E402

pytestmark = pytest.mark.sim


class ScriptedInteraction:
    """Replies with ``replies`` in turn, as verifiers' ``Interaction.turn`` would."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.turns = []
        self.trace = SimpleNamespace(rewards={}, info={},
                                     record_reward=lambda n, v, w=1.0: self.trace.rewards.update({n: v}))

    async def turn(self, message=None):
        self.turns.append(message)
        if not self.replies:
            return SimpleNamespace(terminated=True, last_reply="")
        return SimpleNamespace(terminated=False, last_reply=self.replies.pop(0))


def test_text_replies_become_tool_calls_or_answers():
    message = reply_message('ok <tool_call>{"name": "pick", "arguments": {"object": "cube"}}</tool_call>')
    assert message["tool_calls"][0]["function"] == {"name": "pick", "arguments": '{"object": "cube"}'}
    assert reply_message("The cube is in zone A.") == {"role": "assistant", "content": "The cube is in zone A."}
    assert reply_message("<tool_call>not json</tool_call>")["tool_calls"][0]["function"]["name"] == ""


def test_verifiers_loads_the_taskset_and_runs_a_scored_episode(tmp_path):
    taskset_cls = taskset_class("magma-verifiers")
    env_cls = environment_class("magma-verifiers")
    assert taskset_cls.__name__ == "MagmaTaskset" and env_cls.__name__ == "MagmaEnv"
    config = MagmaConfig(id="magma-verifiers", target="cube.PickPlace", seeds=[0], out=str(tmp_path),
                         slots=2, group_size=2)
    tasks = list(taskset_cls(config).load())
    assert len(tasks) == 1 and tasks[0].data.prompt[-1].content == "Put the cube in zone A."
    assert '"name": "pick"' in tasks[0].data.system_prompt
    replies = ['<tool_call>{"name": "pick", "arguments": {"object": "cube"}}</tool_call>',
               '<tool_call>{"name": "place", "arguments": {"area": "zone_a"}}</tool_call>',
               "The cube is in zone A."]
    interactions = [ScriptedInteraction(replies), ScriptedInteraction(["<tool_call>{oops</tool_call>"])]

    def agents_for(interaction):
        @asynccontextmanager
        async def open_interaction(task):
            yield interaction
        return SimpleNamespace(player=SimpleNamespace(interaction=open_interaction))

    env = env_cls.__new__(env_cls)  # run() needs no config of its own

    async def both():
        await asyncio.gather(*(env.run(tasks[0], agents_for(i)) for i in interactions))

    asyncio.run(both())
    solved, broken = interactions
    assert solved.trace.rewards["magma_reward"] == pytest.approx(1.73)
    assert solved.trace.info["magma"]["status"] == "success"
    assert broken.trace.info["magma"]["status"] == "truncated"
    assert broken.trace.rewards["magma_reward"] == pytest.approx(0.0)
    # both rollouts were one group: same start
    assert solved.trace.info["magma"]["start_digest"] == broken.trace.info["magma"]["start_digest"]
    assert "zone_a" in json.dumps(solved.turns[1:])
