"""The learning-curve experiment's figures (pure, but for the plot's matplotlib): success per
split x condition x arm with its Wilson interval, the exact McNemar tests against the base model
and against trace SFT of the same size, recovery after an injected error and stage completion;
the Markdown table and the PNG plot."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_value as dv  # noqa: E402  (the data-value experiment's statistics)

#: split -> the suite shipped for it
SPLITS = {"compositional": "split_compositional", "perturbed": "split_perturbed",
          "long": "split_long", "other_domain": "split_other_domain"}


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


def size_of(label: str) -> int | None:
    """The training rows of an arm's label (``coached-n48`` -> 48; ``base`` -> None)."""
    head, _, tail = label.rpartition("-n")
    return int(tail) if head and tail.isdigit() else None


def arm_of(label: str) -> str:
    """The arm of a label (``coached-dpo-n48`` -> ``coached-dpo``)."""
    return label.rpartition("-n")[0] if size_of(label) is not None else label


def trace_label(results: Mapping[str, Any], label: str) -> str | None:
    """The trace SFT label an arm is compared with: trace at the same size, else the first."""
    same = f"trace-n{size_of(label)}"
    if same in results:
        return same
    return next((k for k in results if arm_of(k) == "trace"), None)


def report_lines(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The Markdown table: ``results[label][split]`` holds ``split_figures`` plus ``calls``."""
    lines = ["| split | condition | arm | success [95% CI] | vs base | vs trace | recovered | "
             "stage completion | valid-call rate | s/decision |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base = results.get("base", {})
    for split in SPLITS:
        conditions = sorted({c for arm in results.values() for c in arm.get(split, {}).get("figures", {})})
        for condition in conditions:
            for label, by_split in results.items():
                entry = by_split.get(split)
                if not entry or condition not in entry["figures"]:
                    continue
                fig = entry["figures"][condition]
                outcomes = fig["outcomes"]
                rec = fig["recovery"]
                recovered = f"{rec['recovered']}/{rec['injected']}" if rec["injected"] else "-"
                sc = fig["stage_completion"]
                trace = trace_label(results, label)
                versus_trace = ("-" if label == "base" or arm_of(label) == "trace" or trace is None
                                else paired(_outcomes(results[trace], split, condition), outcomes))
                lines.append(
                    f"| {split} | {condition} | {label} | {dv.fmt_rate(fig['success'])} | "
                    f"{'-' if label == 'base' else paired(_outcomes(base, split, condition), outcomes)} | "
                    f"{versus_trace} | {recovered} | "
                    f"{'-' if sc is None else f'{sc:.2f}'} | {entry['calls']['valid_call_rate']:.2f} | "
                    f"{entry['calls']['s_per_decision']:.1f} |")
    return lines


def _success(results: Mapping[str, Any], label: str, split: str) -> float:
    return results[label].get(split, {}).get("figures", {}).get("all", {}).get("success", {}).get("rate", 0.0)


def plot(results: Mapping[str, Mapping[str, Any]], path: Path, curve_arms: Iterable[str] = ("trace", "coached")) -> None:
    """Success per split for every label (bars, left) and, per split, success against training
    rows for each arm of ``curve_arms`` measured at more than one size (the learning curves)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(14, 5))
    grid = fig.add_gridspec(2, 4)
    bars = fig.add_subplot(grid[:, :2])
    labels = list(results)
    width = 0.8 / max(1, len(labels))
    for n, label in enumerate(labels):
        bars.bar([i + n * width for i in range(len(SPLITS))], [_success(results, label, s) for s in SPLITS],
                 width, label=label)
    bars.set_xticks([i + 0.4 - width / 2 for i in range(len(SPLITS))], list(SPLITS))
    bars.set_ylabel("success")
    bars.set_ylim(0, 1)
    bars.legend(fontsize=7)
    for k, split in enumerate(SPLITS):
        curve = fig.add_subplot(grid[k // 2, 2 + k % 2])
        for arm in curve_arms:
            points = sorted((size_of(label), _success(results, label, split)) for label in labels
                            if arm_of(label) == arm)
            if points:
                curve.plot(*zip(*points, strict=True), marker="o", label=arm)
        if "base" in results:
            curve.axhline(_success(results, "base", split), color="grey", linestyle=":", label="base")
        curve.set_xscale("log")
        sizes = sorted({size for label in labels if (size := size_of(label)) is not None})
        curve.set_xticks(sizes, [str(size) for size in sizes], fontsize=7)  # the sizes measured
        curve.minorticks_off()
        curve.set_ylim(0, 1)
        curve.set_title(split, fontsize=9)
        curve.set_xlabel("training rows", fontsize=8)
        curve.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
