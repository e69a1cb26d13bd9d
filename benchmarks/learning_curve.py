"""The learning curve on the tasks MAGMA exists for: held-out splits that cannot leak, data arms
at equal budget, success per split (CPU, opt-in: ``make learning-curve``).

Phases (``--phases``, default all, in this order; each resumes from what ``--out`` holds):

- ``check``: compile the four held-out splits (``split_compositional``, ``split_perturbed``,
  ``split_long``, ``split_other_domain``; see ``magma_scenarios/sorting/splits.py``) and count,
  per split and condition, the held-out instructions found verbatim in the training data and the
  (cube, zone, template) combinations the training definitions produce
  (``magma_core.bench.splits``), and the items that repeat a training task word for word. Any
  overlap in the compositional split, or a repeated task in the perturbed split, stops the
  experiment (exit 2). ``--check-splits`` runs this phase alone.
- ``data``: per data arm, ``magma gen`` over the training definitions (seeds below 1000) and
  ``magma export`` to chat-jsonl (and preference-jsonl for the DPO arm).
- ``train``: trace and coached at every ``--sizes`` (the curve), the other arms at
  ``--derived-size`` (the smallest); per arm and size, the rows drawn at equal budget (``equal_rows``: every arm the
  same number of rows, cycled when an arm has fewer distinct ones, so each sees all of its rows
  at least once) and ``examples/training/train_sft.py`` for ``ceil(rows / batch)`` steps; the
  GRPO arm: ``examples/training/train_grpo.py`` from trace SFT for ``--grpo-steps`` groups.
- ``eval``: every split against every tuned model (and the base model at its best decoding:
  stage-aware decoding on), served on loopback, greedy.
- ``report``: per split x condition x arm: success with its Wilson interval, the exact McNemar
  test against the base model and against trace SFT, recovery after an injected error, stage
  completion, valid-call rate, seconds per decision; ``learning_curve.md`` and
  ``learning_curve.png`` beside the runs.

``--quick``: one size (48 rows), the first 4 seeds of each split's skeletons. ``--smoke``: the check phase and
one arm's data phase at toy size (without the training extras nothing else can run).

    .venv/bin/python benchmarks/learning_curve.py [--out runs/learning-curve] [--quick]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_value as dv  # noqa: E402  (the data-value experiment's serving and reading helpers)
from learning_arms import (  # noqa: E402,F401  (re-exported: the experiment's bookkeeping)
    ALL_ARMS,
    DATA_ARMS,
    DERIVED_ARMS,
    GRPO_FIRST_SEED,
    ONPOLICY_FIRST_SEED,
    budget_plan,
    equal_rows,
    mixed_rows,
    onpolicy_round,
    origin_counts,
    row_key,
    with_needs,
)
from learning_options import (  # noqa: E402,F401
    GEN_MAX_DECISIONS,
    NODES_PER_TREE,
    PHASES,
    SIZES,
    build_parser,
    chosen_arms,
    default_out,
)
from learning_report import SPLITS, paired, plot, recovery, report_lines, split_figures  # noqa: E402,F401

#: only the compositional split must not overlap at all
STRICT_SPLITS = ("compositional",)
#: splits none of whose items may repeat a training task word for word
WHOLE_TASK_SPLITS = ("compositional", "perturbed")
#: the GRPO arm's training tasks: the two-stage ones, with and without the world's failures (a
#: LongSortingTrain group of 4 rollouts would take minutes of generation a step on 2 cores)
GRPO_DEFINITIONS = ("sorting.PerturbedPairSortingTrain", "sorting.PairSortingTrain")
TRAINING_DEFINITIONS = ("sorting.ShortSortingTrain", "sorting.PairSortingTrain", "sorting.PerturbedPairSortingTrain",
                        "sorting.LongSortingTrain")
HELD_OUT_FIRST_SEED = 1000
ARMS = DATA_ARMS
#: the arms measured at every size (the learning curve); the others train at ``--derived-size``
CURVE_ARMS = ("trace", "coached")
DPO_LEARNING_RATE = 5e-5
#: an on-policy round's gen options beside its agent: one branch (as the data arms), the coach,
#: the model sampled (seeded) with stage-aware decoding
ONPOLICY_GEN_OPTIONS = ("--branches", "1", "--coach", "trace", "--temperature", "0.7", "--model-seed", "0",
                        "--stage-decoding", "on")


# --- phases --------------------------------------------------------------------------------

def split_suites(args: argparse.Namespace) -> dict[str, Path]:
    """The compiled splits under ``--out/suites`` (compiled once, frozen)."""
    import yaml

    from magma_core.bench.suite import read_spec

    folders = {}
    for split, suite in SPLITS.items():
        source, name = suite, suite
        if args.items:  # the first N seeds of each skeleton, as a suite of its own
            spec = read_spec(suite)
            name = spec["name"] = f"{suite}-first{args.items}"
            for skeleton in spec["skeletons"]:
                skeleton["seeds"] = min(skeleton.get("seeds", 1), args.items)
            source = args.out / "suites" / f"{name}.yaml"
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text(yaml.safe_dump(spec, sort_keys=False))
        folder = args.out / "suites" / name
        if not (folder / "manifest.json").exists():
            dv.magma("bench", "compile", str(source), "--out", str(folder))
        folders[split] = folder
    return folders


def training_texts(args: argparse.Namespace) -> tuple[set[str], set[tuple[str, ...]], set[tuple[str, ...]]]:
    """The training side of the leak check: every instruction and combination the training
    definitions produce over the training seeds, plus the user turns of every exported row."""
    from magma_core.bench.splits import (
        read_rows,
        row_instructions,
        spec_combinations,
        spec_instructions,
        spec_sequence,
    )
    from magma_core.bench.task_spec import task_to_spec
    from magma_core.scenarios import load_definition

    texts: set[str] = set()
    combinations: set[tuple[str, ...]] = set()
    sequences: set[tuple[str, ...]] = set()
    for name in TRAINING_DEFINITIONS:
        definition = load_definition(name)()
        for seed in range(min(args.trees, HELD_OUT_FIRST_SEED) if args.smoke else HELD_OUT_FIRST_SEED):
            spec = task_to_spec(definition.generate(seed))
            texts |= spec_instructions(spec)
            combinations |= spec_combinations(spec)
            sequences.add(spec_sequence(spec))
    for path in sorted((args.out / "exports").glob("*/*_train.jsonl")):
        texts |= row_instructions(read_rows(path))
    return texts, combinations, sequences


def phase_check(args: argparse.Namespace) -> dict[str, Any]:
    from magma_core.bench.splits import check_split, refuse_leaks
    from magma_core.bench.suite import load_suite

    texts, combinations, sequences = training_texts(args)
    overlaps = []
    for split, folder in split_suites(args).items():
        items = load_suite(folder).items
        overlaps.append(check_split(split, items, texts, combinations, sequences))
        for condition in sorted({i["condition"] for i in items} - {"clean"}):
            overlaps.append(check_split(f"{split}/{condition}",
                                        [i for i in items if i["condition"] == condition], texts, combinations,
                                        sequences))
    for overlap in overlaps:
        print("  " + overlap.line())
    refuse_leaks(overlaps, STRICT_SPLITS, WHOLE_TASK_SPLITS)
    return {o.split: [o.verbatim_in_training, o.overlapping_combinations, o.tasks_in_training]
            for o in overlaps}


def gen_and_export(args: argparse.Namespace, name: str, definition: str, gen_options: list[str],
                   seed: int, trees: int, formats: tuple[str, ...] = ("chat-jsonl",)) -> Path:
    """``magma gen`` (resumes by name) and its exports; the chat-jsonl export's folder."""
    dv.magma("gen", definition, *gen_options, "--trees", str(trees), "--seed", str(seed),
             "--max-decisions", str(args.gen_max_decisions), "--max-nodes", str(args.nodes_per_tree * trees),
             "--name", name, "--out", str(args.out))
    for fmt in formats:
        folder = export_folder(args, name, fmt)
        if not (folder / "manifest.json").exists():
            dv.magma("export", name, "--format", fmt, "--validation-ratio", "0", "--out", str(args.out),
                     "--output", str(folder))
    return export_folder(args, name, "chat-jsonl")


def export_folder(args: argparse.Namespace, name: str, fmt: str) -> Path:
    return args.out / "exports" / (name if fmt == "chat-jsonl" else f"{name}-{fmt}")


def data_name(args: argparse.Namespace, arm: str, definition: str) -> str:
    return f"lc-{arm}-{definition.split('.')[-1]}-t{args.trees}-{gen_shape(args, DATA_ARMS[arm])}"


def gen_shape(args: argparse.Namespace, options: list[str] | tuple[str, ...]) -> str:
    """The part of a generation's name its settings fix (a store refuses to resume another): the
    candidates a tree, gen's decision cap and the branches of its ``options`` (gen's default 2)."""
    branches = options[options.index("--branches") + 1] if "--branches" in options else "2"
    return f"m{args.nodes_per_tree}-d{args.gen_max_decisions}-b{branches}"


def phase_data(args: argparse.Namespace, arm: str) -> dict[str, int]:
    """gen + export of one data arm over every training definition (seeds 0..trees-1); rows per
    origin (the coached arm's repair pairs too, for the DPO arm)."""
    formats = ("chat-jsonl", "preference-jsonl") if arm == "coached" else ("chat-jsonl",)
    for definition in TRAINING_DEFINITIONS:
        gen_and_export(args, data_name(args, arm, definition), definition, [*DATA_ARMS[arm], "--slots", "2"],
                       0, args.trees, formats)
    return origin_counts(arm_rows(args, arm))


def _rows_in(folder: Path) -> list[dict[str, Any]]:
    from magma_core.bench.splits import read_rows

    found = next(folder.glob("*_train.jsonl"), None)
    return read_rows(found) if found else []


def arm_rows(args: argparse.Namespace, arm: str, fmt: str = "chat-jsonl") -> list[dict[str, Any]]:
    """Every exported row of a data arm (``preference-jsonl``: its repair pairs)."""
    rows: list[dict[str, Any]] = []
    for definition in TRAINING_DEFINITIONS:
        rows += _rows_in(export_folder(args, data_name(args, arm, definition), fmt))
    return rows


def model_folder(args: argparse.Namespace, label: str) -> Path:
    return args.out / f"tuned-{label}"


def round_rows(args: argparse.Namespace, round_: int, size: int) -> list[dict[str, Any]]:
    """The rows on-policy round ``round_`` at ``size`` exported (see :func:`onpolicy_data`)."""
    rows: list[dict[str, Any]] = []
    for definition in TRAINING_DEFINITIONS:
        rows += _rows_in(export_folder(args, onpolicy_name(args, round_, size, definition), "chat-jsonl"))
    return rows


def onpolicy_rows(args: argparse.Namespace, round_: int, size: int) -> list[dict[str, Any]]:
    """The on-policy rows of rounds 1..``round_`` at ``size`` (the aggregate a round trains on)."""
    return [row for r in range(1, round_ + 1) for row in round_rows(args, r, size)]


def onpolicy_name(args: argparse.Namespace, round_: int, size: int, definition: str) -> str:
    shape = gen_shape(args, ONPOLICY_GEN_OPTIONS)
    return f"lc-onpolicy-r{round_}-n{size}-{definition.split('.')[-1]}-t{args.onpolicy_trees}-{shape}"


def onpolicy_data(args: argparse.Namespace, round_: int, size: int) -> dict[str, int]:
    """Round ``round_``'s generation: the previous round's model (coached SFT for round 1) served
    as gen's agent on fresh training seeds, sampled (one branch, as the data arms), its failures
    repaired by the coach and validated by re-execution; rows per origin."""
    previous = f"coached-n{size}" if round_ == 1 else f"onpolicy-r{round_ - 1}-n{size}"
    done = all((export_folder(args, onpolicy_name(args, round_, size, d), "chat-jsonl") / "manifest.json").exists()
               for d in TRAINING_DEFINITIONS)
    if not done:
        with dv.ChatServer(model_folder(args, previous), previous, args.max_tokens, args.threads,
                           base=args.base_model) as server:
            options = ["--agent", f"openai:{previous}@{server.url}", *ONPOLICY_GEN_OPTIONS,
                       "--max-tokens", str(args.max_tokens), *server_options(server)]
            for definition in TRAINING_DEFINITIONS:
                gen_and_export(args, onpolicy_name(args, round_, size, definition), definition, options,
                               ONPOLICY_FIRST_SEED[round_], args.onpolicy_trees)
    return origin_counts(round_rows(args, round_, size))


def server_options(server: Any) -> list[str]:
    """The ``magma bench run`` / ``magma gen`` flags the serving engine needs (``--slots``,
    ``--call-prefill``), else none."""
    return list(getattr(server, "bench_args", []))


def training_plan(args: argparse.Namespace, arm: str, size: int) -> dict[str, Any]:
    """What one (arm, size) trains on and how: its rows, the model it starts from, DPO or SFT,
    masked turns trained on or not, the learning rate; the steps are ``ceil(size / batch)``."""
    plan: dict[str, Any] = {"arm": arm, "size": size, "init": "base", "dpo": False, "train_on_masked": False,
                            "learning_rate": args.learning_rate, "steps": math.ceil(size / args.batch_size)}
    round_ = onpolicy_round(arm)
    if arm in DATA_ARMS:
        plan["rows"] = equal_rows(arm_rows(args, arm), size)
    elif arm == "coached-unmasked":
        plan.update(rows=equal_rows(arm_rows(args, "coached"), size), train_on_masked=True)
    elif arm == "coached-dpo":
        plan.update(rows=equal_rows(arm_rows(args, "coached", "preference-jsonl"), size), dpo=True,
                    init=str(model_folder(args, f"coached-n{size}")), learning_rate=DPO_LEARNING_RATE)
    elif arm == "grpo":
        plan.update(rows=[], grpo=True, init=str(model_folder(args, f"trace-n{size}")), steps=args.grpo_steps,
                    learning_rate=args.grpo_learning_rate)
    elif round_ is not None:
        plan["rows"] = mixed_rows(onpolicy_rows(args, round_, size), arm_rows(args, "coached"), size)
    else:
        raise ValueError(f"unknown arm {arm!r}")
    return plan


def phase_train(args: argparse.Namespace, arm: str, size: int) -> dict[str, Any]:
    """Train one (arm, size) once (an on-policy arm generates its round first); its facts."""
    label = f"{arm}-n{size}"
    model = model_folder(args, label)
    facts: dict[str, Any] = {}
    round_ = onpolicy_round(arm)
    if round_ is not None:
        facts["onpolicy_rows"] = onpolicy_data(args, round_, size)
    if not (model / "training.json").exists():
        plan = training_plan(args, arm, size)
        data = args.out / "train-rows" / f"{label}.jsonl"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in plan["rows"]))
        command = grpo_command(args, plan, model) if plan.get("grpo") else sft_command(args, plan, data, model)
        subprocess.run(command, check=True, env=training_env(args))
        record_arm(args, label, {k: v for k, v in plan.items() if k != "rows"} | {
            "rows": len(plan["rows"]), "distinct": len({row_key(r) for r in plan["rows"]}),
            "origins": origin_counts(plan["rows"]), "data": str(data)})
    info = json.loads((model / "training.json").read_text())
    return facts | {"steps": info.get("steps"), "loss_first": info.get("losses", [None])[0],
                    "loss_last": info.get("losses", [None])[-1], "train_seconds": info.get("train_seconds"),
                    "tokens_per_second": info.get("tokens_per_second"), "masked_turns": info.get("masked_turns"),
                    "truncated_rows": info.get("truncated_rows")} | (
        {"seconds_per_step": info.get("seconds_per_step"), "reward_mean": info.get("reward_mean")}
        if info.get("grpo") else {})


def sft_command(args: argparse.Namespace, plan: Mapping[str, Any], data: Path, model: Path) -> list[str]:
    """``train_sft.py`` for an SFT or DPO arm: ``plan``'s rows (written to ``data``), steps,
    learning rate, init and masking."""
    command = [sys.executable, str(dv.TRAINING / "train_sft.py"), str(data), "--out", str(model),
               "--steps", str(plan["steps"]), "--batch-size", str(args.batch_size),
               "--learning-rate", str(plan["learning_rate"]), "--base", args.base_model]
    if plan["dpo"]:
        command += ["--dpo", "--init", plan["init"]]
    if plan["train_on_masked"]:
        command += ["--train-on-masked"]
    if args.precision:
        command += ["--precision", args.precision]
    return command


def grpo_command(args: argparse.Namespace, plan: Mapping[str, Any], model: Path) -> list[str]:
    """``train_grpo.py`` for the GRPO arm: ``plan``'s init and steps, groups of
    ``--grpo-group-size`` over ``--grpo-items`` seeds of each GRPO definition, replies and
    episodes capped as the evaluation caps them."""
    seeds = f"{GRPO_FIRST_SEED}-{GRPO_FIRST_SEED + args.grpo_items - 1}"
    command = [sys.executable, str(dv.TRAINING / "train_grpo.py"), "--init", plan["init"], "--out", str(model),
               "--steps", str(plan["steps"]), "--group-size", str(args.grpo_group_size),
               "--learning-rate", str(plan["learning_rate"]), "--definitions", ",".join(GRPO_DEFINITIONS),
               "--seeds", seeds, "--max-new-tokens", str(args.max_tokens), "--max-decisions", str(args.max_decisions),
               "--beta", str(args.grpo_beta)]
    if args.precision:
        command += ["--precision", args.precision]
    if args.train_threads:
        command += ["--threads", str(args.train_threads)]
    return command


def training_env(args: argparse.Namespace) -> dict[str, str]:
    """The trainer's environment: ``--train-threads`` OpenMP threads (default 1: a count fixed by
    the command, not by the machine, since the order of a sum over threads changes the weights'
    last bits), waiting passively (on 2 busy cores, spinning threads made a training step of
    about 1,200 tokens take 90-120 s; one passive thread took 19 s): data_value's."""
    return dv.training_env(args.train_threads)


def record_arm(args: argparse.Namespace, label: str, facts: Mapping[str, Any]) -> None:
    """``arms.json`` beside the runs: what each label was trained on (the data arm, rows,
    distinct rows, origins, steps, the model it started from), so a result names its data."""
    path = args.out / "arms.json"
    with open(args.out / "arms.json.lock", "w") as lock:  # arms may train in processes side by side
        fcntl.flock(lock, fcntl.LOCK_EX)
        arms = json.loads(path.read_text()) if path.exists() else {}
        arms[label] = dict(facts)
        path.write_text(json.dumps(arms, indent=2, sort_keys=True) + "\n")


def decoding_of(args: argparse.Namespace, label: str) -> str:
    """The stage-aware decoding a label is evaluated with: the base model at its best (``on``:
    the stage's tools only, the call grammar from the first token), a tuned model as it was
    trained (``--tuned-decoding``, ``off``: every tool offered, as in the exported rows)."""
    return args.base_decoding if label == "base" else args.tuned_decoding


def eval_name(label: str, split: str, decoding: str = "on") -> str:
    return f"lc-{label}-{split}" + ("" if decoding == "on" else "-all-tools")


def phase_eval(args: argparse.Namespace, suites: Mapping[str, Path], model: str | Path, label: str) -> None:
    """Every split against one model, served on loopback, greedy, stage-aware decoding (resumes)."""
    if label != "base" and not (Path(model) / "training.json").exists():
        print(f"  eval {label}: skipped, not trained yet ({model})", flush=True)
        return
    decoding = decoding_of(args, label)
    with dv.ChatServer(model, label, args.max_tokens, args.threads, base=args.base_model) as server:
        for split, suite in suites.items():
            dv.magma("bench", "run", str(suite), "--agent", f"openai:{label}@{server.url}", "--trials", "1",
                     "--max-decisions", str(args.max_decisions), "--max-tokens", str(args.max_tokens),
                     "--temperature", "0", "--stage-decoding", decoding, *server_options(server),
                     "--name", eval_name(label, split, decoding), "--out", str(args.out))


def phase_report(args: argparse.Namespace, suites: Mapping[str, Path], labels: list[str]) -> list[str]:
    from magma_core.bench.metrics import collect
    from magma_core.bench.suite import load_suite
    from magma_core.store.reader import StoreReader

    reader = StoreReader(args.out)
    results: dict[str, dict[str, Any]] = {}
    benches = set(reader.list_benches())
    for label in labels:
        for split, folder in suites.items():
            name = eval_name(label, split, decoding_of(args, label))
            if name not in benches:
                continue
            injected = {i["item_id"]: i["metadata"]["intervention_stages"] for i in load_suite(folder).items
                        if i["condition"] == "execution_error"}
            trials, _ = collect(reader, name)
            figures = dv.bench_figures(args.out, name)
            results.setdefault(label, {})[split] = {"figures": split_figures(trials, injected), "calls": figures}
    lines = report_lines(results)
    (args.out / "learning_curve.md").write_text("\n".join(lines) + "\n")
    plot(results, args.out / "learning_curve.png")
    return lines


def labels_of(arms: list[str], sizes: list[int], derived_size: int | None = None) -> list[tuple[str, int]]:
    """(arm, size) pairs in build order: the curve arms (trace, coached) at every size, the other
    arms at ``derived_size`` (default: the smallest of ``sizes``, where every arm meets the curve
    at one budget for the least training)."""
    other = derived_size or min(sizes)
    return [(arm, size) for arm in arms for size in (sizes if arm in CURVE_ARMS else [other])]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.items, args.trees, args.onpolicy_trees = args.sizes or "48", args.items or 4, 16, 4
        args.grpo_steps = min(args.grpo_steps, 8)
    args.sizes = args.sizes or ",".join(map(str, SIZES))
    phases = ["check"] if args.check_splits else [p.strip() for p in args.phases.split(",") if p.strip()]
    arms = chosen_arms(args)
    unknown = (set(phases) - set(PHASES)) | (set(arms) - set(ALL_ARMS))
    if unknown:
        raise SystemExit(f"unknown phases or arms: {', '.join(sorted(unknown))}")
    if args.smoke:
        args.trees, arms, phases, args.items = 2, ["trace"], ["check", "data"], 2
    if max(args.trees, ONPOLICY_FIRST_SEED[2] + args.onpolicy_trees) > HELD_OUT_FIRST_SEED:
        raise SystemExit(f"--trees / --onpolicy-trees would reach the held-out seeds ({HELD_OUT_FIRST_SEED}+)")
    if args.trees > GRPO_FIRST_SEED or GRPO_FIRST_SEED + args.grpo_items > ONPOLICY_FIRST_SEED[1]:
        raise SystemExit(f"--trees {args.trees} / --grpo-items {args.grpo_items} would reach the GRPO arm's "
                         f"seeds ({GRPO_FIRST_SEED}+) or the on-policy rounds' ({ONPOLICY_FIRST_SEED[1]}+)")
    args.out = (args.out or default_out(args)).resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    missing = dv.extras_missing()
    if missing and set(phases) & {"train", "eval"}:
        raise SystemExit(f"learning-curve: {missing}")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    arms = with_needs(arms)
    if args.derived_size is not None and args.derived_size not in sizes:
        raise SystemExit(f"--derived-size {args.derived_size}: one of --sizes ({args.sizes}), since "
                         "DPO and on-policy round 1 start from the coached model of that size")
    pairs = labels_of(arms, sizes, args.derived_size)
    labels = ["base"] + [f"{arm}-n{size}" for arm, size in pairs]
    if args.labels:
        labels = [label for label in args.labels.split(",") if label]
    for phase in [p for p in PHASES if p in phases]:
        started = time.perf_counter()
        facts: Any = {}
        if phase == "check":
            from magma_core.user_error import UserError

            try:
                facts = phase_check(args)
            except UserError as exc:
                print(f"learning-curve: {exc}", file=sys.stderr)
                return 2
        elif phase == "data":
            facts = {arm: phase_data(args, arm) for arm in arms if arm in DATA_ARMS}
        elif phase == "train":
            facts = {"plan": budget_plan({arm: arm_rows(args, arm) for arm in arms if arm in DATA_ARMS}, sizes,
                                         args.batch_size)}
            for arm, size in pairs:
                facts[f"{arm}-n{size}"] = phase_train(args, arm, size)
                print(f"  trained {arm}-n{size}: {json.dumps(facts[f'{arm}-n{size}'])}", flush=True)
        elif phase == "eval":
            suites = split_suites(args)
            for label in labels:
                phase_eval(args, suites, "base" if label == "base" else model_folder(args, label), label)
        elif phase == "report":
            print("\n".join(phase_report(args, split_suites(args), labels)))
        print(f"phase {phase}: {json.dumps(facts)} wall {time.perf_counter() - started:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
