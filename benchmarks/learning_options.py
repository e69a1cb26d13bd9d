"""The learning-curve experiment's command-line options and the run-size constants they default to."""

from __future__ import annotations

import argparse
from pathlib import Path

from learning_arms import ALL_ARMS

PHASES = ("check", "data", "train", "eval", "report")
#: the base models of examples/training/gguf_model.py (named here: this module loads no model code)
BASE_MODEL_NAMES = ("smollm2", "gemma3")
#: the full run's training rows per curve arm. On 2 cores a coached row is about 1,600 tokens and
#: bf16 training ran about 150-170 tokens/s a core: 192 rows take about 30 minutes an arm, 768
#: would take about 2 hours, over the run's 4-hour budget with every other arm and evaluation
SIZES = (48, 96, 192)
#: gen candidates per tree: a coached tree is a rollout plus one per validated repair, and a
#: LongSortingTrain task takes up to 36 decisions (coached, 64 trees: 114 of 308 rows complete at
#: 80 a tree, 11 of 172 at 40); the shorter definitions' trees end well inside it
NODES_PER_TREE = 80
#: gen's decision cap: above the longest training task (LongSortingTrain's reference takes 28-36
#: decisions on seeds 0-15; at a cap of 24, 58 of 64 trace rows stopped before the end)
GEN_MAX_DECISIONS = 40

#: the GRPO arm's steps: a group of 4 two-stage rollouts and its update took about 84 s on 2 cores
#: with the call grammar (16 steps: 22 minutes)
GRPO_STEPS = 24


def build_parser(description: str) -> argparse.ArgumentParser:
    """The options of ``benchmarks/learning_curve.py``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=None,
                        help="store folder (runs/learning-curve; runs/learning-curve-gemma3 for --base-model gemma3)")
    parser.add_argument("--base-model", choices=BASE_MODEL_NAMES, default="smollm2",
                        help="the model every arm starts from: smollm2 (SmolLM2-135M-Instruct) or gemma3 "
                             "(Gemma 3 270M; not the GRPO arm)")
    parser.add_argument("--phases", default=",".join(PHASES), help="comma-separated, of " + ", ".join(PHASES))
    parser.add_argument("--check-splits", action="store_true", help="the check phase alone")
    parser.add_argument("--arms", default=None,
                        help="arms, of " + ", ".join(ALL_ARMS) + " (default: all; all but grpo for gemma3)")
    parser.add_argument("--sizes", default=None,
                        help=f"training rows per curve arm, trace and coached ({','.join(map(str, SIZES))}; "
                             "--quick: 48)")
    parser.add_argument("--derived-size", type=int, default=None,
                        help="training rows of every other arm (noisy, coached-unmasked, coached-dpo, "
                             "on-policy; default: the smallest of --sizes)")
    parser.add_argument("--trees", type=int, default=32, help="gen trees per training definition")
    parser.add_argument("--nodes-per-tree", type=int, default=NODES_PER_TREE,
                        help=f"gen candidates per tree (--max-nodes = this x trees; {NODES_PER_TREE})")
    parser.add_argument("--onpolicy-trees", type=int, default=8, help="on-policy gen trees per definition and round")
    parser.add_argument("--items", type=int, default=None, help="the first N seeds of each split's skeletons")
    parser.add_argument("--batch-size", type=int, default=1,
                        help="rows a training step (1: a step a row; at 4, with rows up to 4,096 "
                             "tokens, one trainer took 12 GB and two side by side were killed for memory)")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--grpo-steps", type=int, default=GRPO_STEPS,
                        help=f"the GRPO arm's optimizer steps, one group each ({GRPO_STEPS})")
    parser.add_argument("--grpo-group-size", type=int, default=4, help="rollouts per GRPO group (one snapshot)")
    parser.add_argument("--grpo-items", type=int, default=32, help="training seeds per GRPO definition")
    parser.add_argument("--grpo-learning-rate", type=float, default=3e-4)
    parser.add_argument("--grpo-beta", type=float, default=0.0,
                        help="the GRPO arm's KL weight to trace SFT (0: none)")
    parser.add_argument("--max-decisions", type=int, default=24, help="bench's decision cap (eval)")
    parser.add_argument("--gen-max-decisions", type=int, default=GEN_MAX_DECISIONS,
                        help=f"gen's decision cap (data; {GEN_MAX_DECISIONS})")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1, help="the model server's CPU threads")
    parser.add_argument("--train-threads", type=int, default=1,
                        help="the trainer's OpenMP threads (1: a fixed count, so the sums and the "
                             "weights do not depend on the machine; 0: torch's default)")
    parser.add_argument("--base-decoding", choices=("on", "off"), default="on",
                        help="the base model's stage-aware decoding (on: its best)")
    parser.add_argument("--tuned-decoding", choices=("on", "off"), default="off",
                        help="a tuned model's (off: every tool offered, as its training rows did; with "
                             "on, trace SFT at 48 rows called detect_objects in every answer stage: "
                             "compositional 0/4 on, 4/4 off)")
    parser.add_argument("--precision", choices=("auto", "bf16", "f32"), default="auto",
                        help="the trainer's precision (auto: bf16 autocast where the CPU computes bf16, "
                             "2.3-3.1x f32's tokens/s, else f32; bf16 asks it of DPO too)")
    parser.add_argument("--labels", default=None,
                        help="eval/report only these labels (comma-separated, e.g. base,trace-n48)")
    parser.add_argument("--quick", action="store_true",
                        help="48 rows (unless --sizes says), 16 trees, 4 seeds per skeleton")
    parser.add_argument("--smoke", action="store_true", help="check + one arm's data at toy size")
    return parser


def chosen_arms(args: argparse.Namespace) -> list[str]:
    """The arms ``--arms`` names (default: every arm, but GRPO only on smollm2, whose stream
    ``train_grpo.py`` reads turn ends of); ``--arms grpo`` on another base is refused."""
    if not args.arms:
        return [arm for arm in ALL_ARMS if arm != "grpo" or args.base_model == "smollm2"]
    arms = [arm.strip() for arm in args.arms.split(",") if arm.strip()]
    if args.base_model != "smollm2" and "grpo" in arms:
        raise SystemExit(f"--arms grpo: the GRPO arm runs on smollm2 only, not --base-model {args.base_model}")
    return arms


def default_out(args: argparse.Namespace) -> Path:
    """The store folder without ``--out``: runs/learning-curve, ``-smoke`` for ``--smoke``, the
    base model's name after it for any base but smollm2 (its own models, runs and report)."""
    name = "learning-curve" + ("-smoke" if args.smoke else "")
    return Path("runs") / (name if args.base_model == "smollm2" else f"{name}-{args.base_model}")
