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
- ``train``: per arm and size, the rows drawn at equal budget (``equal_rows``: every arm the
  same number of rows, cycled when an arm has fewer distinct ones, so each sees all of its rows
  at least once) and ``examples/training/train_sft.py`` for ``ceil(rows / batch)`` steps.
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
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_value as dv  # noqa: E402  (the data-value experiment's serving and reading helpers)

PHASES = ("check", "data", "train", "eval", "report")
#: split -> the suite shipped for it; only the compositional split must not overlap at all
SPLITS = {"compositional": "split_compositional", "perturbed": "split_perturbed",
          "long": "split_long", "other_domain": "split_other_domain"}
STRICT_SPLITS = ("compositional",)
#: splits none of whose items may repeat a training task word for word
WHOLE_TASK_SPLITS = ("compositional", "perturbed")
TRAINING_DEFINITIONS = ("sorting.ShortSortingTrain", "sorting.PairSortingTrain", "sorting.PerturbedPairSortingTrain",
                        "sorting.LongSortingTrain")
HELD_OUT_FIRST_SEED = 1000
#: data arm -> magma gen options (the base arm has no data)
ARMS = {
    "trace": ["--agent", "trace", "--branches", "1"],
    "noisy": ["--agent", "noisy-trace:0.3", "--branches", "2"],
    "coached": ["--agent", "noisy-trace:0.3", "--branches", "2", "--coach", "trace"],
}
SIZES = (48, 192, 768)


# --- arms at equal budget (pure) -----------------------------------------------------------

def row_key(row: Mapping[str, Any]) -> str:
    """A row's stable sort key: its id, else a digest of its text."""
    return str(row.get("id") or hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest())


def equal_rows(rows: list[dict[str, Any]], size: int, seed: int = 0) -> list[dict[str, Any]]:
    """Exactly ``size`` rows of an arm: its distinct rows in a seeded order, cycled (whole
    epochs first) when the arm has fewer than ``size``; a function of the rows and the seed."""
    if not rows:
        raise ValueError("an arm without rows cannot be trained")
    ordered = sorted(rows, key=lambda r: hashlib.sha256(f"{seed}:{row_key(r)}".encode()).hexdigest())
    return [ordered[i % len(ordered)] for i in range(size)]


def budget_plan(rows_by_arm: Mapping[str, list[dict[str, Any]]], sizes: Iterable[int],
                batch_size: int) -> list[dict[str, Any]]:
    """One entry per (arm, size): rows, distinct rows, epochs over them and optimizer steps;
    every arm of one size gets the same rows count and the same steps."""
    plan = []
    for size in sizes:
        for arm, rows in sorted(rows_by_arm.items()):
            distinct = len({row_key(r) for r in rows})
            plan.append({"arm": arm, "size": size, "rows": size, "distinct": distinct,
                         "epochs": round(size / distinct, 2) if distinct else 0.0,
                         "steps": math.ceil(size / batch_size)})
    return plan


# --- figures (pure) ------------------------------------------------------------------------

def recovery(trials: Iterable[Any], injected: Mapping[str, list[int]]) -> dict[str, int]:
    """Errors recovered / errors injected: a trial of an item with an injected execution error
    at stage s recovered it when its episode passed stage s (``stages_passed > s``)."""
    out = {"injected": 0, "recovered": 0}
    for trial in trials:
        for stage in injected.get(trial.item["item_id"], []):
            out["injected"] += 1
            out["recovered"] += int(trial.stages_passed > stage)
    return out


def split_figures(trials: list[Any], injected: Mapping[str, list[int]]) -> dict[str, dict[str, Any]]:
    """Per condition (and ``all``): success, stage completion, recovery and the outcomes by
    (item, trial) for the paired tests."""
    from magma_core.bench.stats import rate

    groups: dict[str, list[Any]] = {"all": list(trials)}
    for trial in trials:
        groups.setdefault(trial.item["condition"], []).append(trial)
    figures = {}
    for condition, group in sorted(groups.items()):
        stages = sum(t.stages_total for t in group)
        figures[condition] = {
            "success": rate(sum(t.success for t in group), len(group)),
            "stage_completion": (sum(t.stages_passed for t in group) / stages) if stages else None,
            "recovery": recovery(group, injected),
            "outcomes": {(t.item["item_id"], t.trial): t.success for t in group},
        }
    return figures


def paired(a: Mapping[Any, bool] | None, b: Mapping[Any, bool] | None) -> str:
    """``p = …`` of the exact McNemar test of ``b`` against ``a`` (``-`` without both)."""
    if not a or not b:
        return "-"
    test = dv.mcnemar_exact(dict(a), dict(b))
    return f"{test['gained']}+/{test['lost']}- p={test['p']:.3g}"


def _outcomes(by_split: Mapping[str, Any], split: str, condition: str) -> Mapping[Any, bool] | None:
    return by_split.get(split, {}).get("figures", {}).get(condition, {}).get("outcomes")


def report_lines(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The Markdown table: ``results[arm][split]`` holds ``split_figures`` plus ``calls``."""
    lines = ["| split | condition | arm | success [95% CI] | vs base | vs trace | recovered | "
             "stage completion | valid-call rate | s/decision |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base, trace = results.get("base", {}), next((v for k, v in results.items() if k.startswith("trace")), {})
    for split in SPLITS:
        conditions = sorted({c for arm in results.values() for c in arm.get(split, {}).get("figures", {})})
        for condition in conditions:
            for arm, by_split in results.items():
                entry = by_split.get(split)
                if not entry or condition not in entry["figures"]:
                    continue
                fig = entry["figures"][condition]
                outcomes = fig["outcomes"]
                rec = fig["recovery"]
                recovered = f"{rec['recovered']}/{rec['injected']}" if rec["injected"] else "-"
                sc = fig["stage_completion"]
                lines.append(
                    f"| {split} | {condition} | {arm} | {dv.fmt_rate(fig['success'])} | "
                    f"{'-' if arm == 'base' else paired(_outcomes(base, split, condition), outcomes)} | "
                    f"{'-' if arm.startswith('trace') else paired(_outcomes(trace, split, condition), outcomes)} | "
                    f"{recovered} | "
                    f"{'-' if sc is None else f'{sc:.2f}'} | {entry['calls']['valid_call_rate']:.2f} | "
                    f"{entry['calls']['s_per_decision']:.1f} |")
    return lines


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


def phase_data(args: argparse.Namespace, arm: str) -> int:
    """gen + export of one arm over every training definition; the rows written."""
    rows = 0
    for definition in TRAINING_DEFINITIONS:
        name = f"lc-{arm}-{definition.split('.')[-1]}-t{args.trees}"
        dv.magma("gen", definition, *ARMS[arm], "--trees", str(args.trees), "--seed", "0", "--slots", "2",
                 "--max-decisions", "24", "--max-nodes", str(dv.NODES_PER_TREE * args.trees),
                 "--name", name, "--out", str(args.out))
        folder = args.out / "exports" / name
        if not (folder / "manifest.json").exists():
            dv.magma("export", name, "--format", "chat-jsonl", "--validation-ratio", "0",
                     "--out", str(args.out), "--output", str(folder))
        rows += sum(1 for _ in next(folder.glob("*_train.jsonl")).open())
    return rows


def arm_rows(args: argparse.Namespace, arm: str) -> list[dict[str, Any]]:
    from magma_core.bench.splits import read_rows

    rows: list[dict[str, Any]] = []
    for definition in TRAINING_DEFINITIONS:
        folder = args.out / "exports" / f"lc-{arm}-{definition.split('.')[-1]}-t{args.trees}"
        rows += read_rows(next(folder.glob("*_train.jsonl")))
    return rows


def phase_train(args: argparse.Namespace, arm: str, size: int) -> Path:
    model = args.out / f"tuned-{arm}-n{size}"
    if (model / "training.json").exists():
        return model
    data = args.out / "train-rows" / f"{arm}-n{size}.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in equal_rows(arm_rows(args, arm), size)))
    subprocess.run([sys.executable, str(dv.TRAINING / "train_sft.py"), str(data), "--out", str(model),
                    "--steps", str(math.ceil(size / args.batch_size)), "--batch-size", str(args.batch_size),
                    "--learning-rate", str(args.learning_rate)], check=True)
    return model


def phase_eval(args: argparse.Namespace, suites: Mapping[str, Path], model: str | Path, label: str) -> None:
    with dv.ChatServer(model, label, args.max_tokens, args.threads) as server:
        for split, suite in suites.items():
            dv.magma("bench", "run", str(suite), "--agent", f"openai:{label}@{server.url}", "--trials", "1",
                     "--max-decisions", str(args.max_decisions), "--max-tokens", str(args.max_tokens),
                     "--temperature", "0", "--stage-decoding", "on", "--name", f"lc-{label}-{split}",
                     "--out", str(args.out))


def phase_report(args: argparse.Namespace, suites: Mapping[str, Path], labels: list[str]) -> list[str]:
    from magma_core.bench.metrics import collect
    from magma_core.bench.suite import load_suite
    from magma_core.store.reader import StoreReader

    reader = StoreReader(args.out)
    results: dict[str, dict[str, Any]] = {}
    for label in labels:
        for split, folder in suites.items():
            name = f"lc-{label}-{split}"
            if name not in reader.list_benches():
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


def plot(results: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """Success per split for every arm (bars) and per training size (the curve)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (bars, curve) = plt.subplots(1, 2, figsize=(12, 4.5))
    labels = list(results)
    width = 0.8 / max(1, len(labels))
    for n, label in enumerate(labels):
        values = [results[label].get(s, {}).get("figures", {}).get("all", {}).get("success", {}).get("rate", 0)
                  for s in SPLITS]
        bars.bar([i + n * width for i in range(len(SPLITS))], values, width, label=label)
    bars.set_xticks([i + 0.4 - width / 2 for i in range(len(SPLITS))], list(SPLITS))
    bars.set_ylabel("success")
    bars.legend(fontsize=7)
    for arm in ARMS:
        points = sorted((int(label.rsplit("-n", 1)[1]),
                         results[label].get("compositional", {}).get("figures", {}).get("all", {})
                         .get("success", {}).get("rate", 0))
                        for label in labels if label.startswith(f"{arm}-n"))
        if points:
            curve.plot(*zip(*points, strict=True), marker="o", label=arm)
    curve.set_xscale("log")
    curve.set_xlabel("training rows")
    curve.set_ylabel("compositional success")
    curve.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="store folder (runs/learning-curve)")
    parser.add_argument("--phases", default=",".join(PHASES), help="comma-separated, of " + ", ".join(PHASES))
    parser.add_argument("--check-splits", action="store_true", help="the check phase alone")
    parser.add_argument("--arms", default=",".join(ARMS), help="data arms, of " + ", ".join(ARMS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="training rows per arm")
    parser.add_argument("--trees", type=int, default=64, help="gen trees per training definition")
    parser.add_argument("--items", type=int, default=None, help="the first N seeds of each split's skeletons")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--max-decisions", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="48 rows, 4 seeds per skeleton")
    parser.add_argument("--smoke", action="store_true", help="check + one arm's data at toy size")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.items = "48", args.items or 4
    phases = ["check"] if args.check_splits else [p.strip() for p in args.phases.split(",") if p.strip()]
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = (set(phases) - set(PHASES)) | (set(arms) - set(ARMS))
    if unknown:
        raise SystemExit(f"unknown phases or arms: {', '.join(sorted(unknown))}")
    if args.smoke:
        args.trees, arms, phases, args.items = 2, ["trace"], ["check", "data"], 2
    if args.trees > HELD_OUT_FIRST_SEED:
        raise SystemExit(f"--trees {args.trees} would reach the held-out seeds ({HELD_OUT_FIRST_SEED}+)")
    args.out = (args.out or Path("runs") / ("learning-curve-smoke" if args.smoke else "learning-curve")).resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    missing = dv.extras_missing()
    if missing and set(phases) & {"train", "eval"}:
        raise SystemExit(f"learning-curve: {missing}")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sizes = [int(s) for s in args.sizes.split(",")]
    labels = ["base"] + [f"{arm}-n{size}" for arm in arms for size in sizes]
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
            facts = {arm: phase_data(args, arm) for arm in arms}
        elif phase == "train":
            facts = budget_plan({arm: arm_rows(args, arm) for arm in arms}, sizes, args.batch_size)
            for arm in arms:
                for size in sizes:
                    phase_train(args, arm, size)
        elif phase == "eval":
            suites = split_suites(args)
            phase_eval(args, suites, "base", "base")
            for arm in arms:
                for size in sizes:
                    phase_eval(args, suites, args.out / f"tuned-{arm}-n{size}", f"{arm}-n{size}")
        elif phase == "report":
            print("\n".join(phase_report(args, split_suites(args), labels)))
        print(f"phase {phase}: {json.dumps(facts)} wall {time.perf_counter() - started:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
