"""The printed report's breakdown and noise tables: per item, per stage, per failure reason
(:mod:`magma_core.bench.breakdown`), the noise floor of each run and, with ``--compare``, a
sentence per compared run saying whether its difference is inside the noise floor
(:mod:`magma_core.bench.noise`). Every column folds rather than cuts, so the tables fit an
80-column terminal whole."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from magma_core.bench.noise import compare_line, compare_noise
from magma_core.json_types import JSONDict

MARKS = {True: "✓", False: "✗", None: "·"}


def noise_comparisons(reports: dict[str, JSONDict]) -> dict[str, JSONDict]:
    """run -> :func:`~magma_core.bench.noise.compare_noise` of it against the first run, with
    its sentence (``message``)."""
    runs = list(reports)
    out = {}
    for run in runs[1:]:
        c = compare_noise(reports[runs[0]], reports[run])
        out[run] = c | {"message": compare_line(runs[0], run, c)}
    return out


def _table(title: str, *columns: str) -> Table:
    """Text columns left, counts right (a column named with a leading ``#``)."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column.lstrip("#"), overflow="fold",
                         justify="right" if column.startswith("#") else "left")
    return table


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _statuses(counts: dict[str, int], sep: str = ", ") -> str:
    return sep.join(f"{s.replace('_', ' ')} {n}" for s, n in counts.items() if s != "success") or "–"


def floor_text(floor: JSONDict, paired: int) -> str:
    """``±D points (M of N pairs)``, or why there is none."""
    if floor["difference"] is None:
        return f"none at {paired} pairs"
    return f"±{100 * floor['difference']:.1f} pts ({floor['pairs']} of {paired} pairs)"


def print_noise(reports: dict[str, JSONDict], console: Console) -> None:
    """The noise-floor table (runs as columns) and the compare sentences."""
    runs = list(reports)
    table = _table("Noise floor (identical trials of an item)", "", *[f"#{r}" for r in runs])
    rows = (
        ("flip rate", lambda n: "–" if n["flip_rate"]["rate"] is None else
         f"{_pct(n['flip_rate']['rate'])} {n['flip_rate']['disagreeing']}/{n['flip_rate']['pairs']} pairs"),
        ("items with mixed verdicts", lambda n: f"{n['mixed_items']['num']}/{n['mixed_items']['den']}"),
        ("smallest real difference", lambda n: floor_text(n["floor"], n["paired_trials"])),
    )
    for label, cell in rows:
        table.add_row(label, *[cell(reports[r]["noise"]) for r in runs])
    console.print(table)
    console.print("flip rate: share of an item's pairs of trials whose verdicts differ; smallest real "
                  "difference: of a paired run over these trials (exact McNemar, p < 0.05)",
                  highlight=False, markup=False)
    for comparison in noise_comparisons(reports).values():
        console.print(comparison["message"], highlight=False, markup=False)


def print_breakdown(reports: dict[str, JSONDict], console: Console) -> None:
    """Per run: the per-item, per-stage and per-failure-reason tables."""
    for run, report in reports.items():
        noise = report["noise"]["by_item"]
        floors = any(noise.get(i, {}).get("floor") is not None for i in report["by_item"])
        t = _table(f"Items: {run}", "item", "trials", "#flips", *(["#floor"] if floors else []), "failures")
        for item_id, row in report["by_item"].items():
            verdicts = "".join(MARKS[v] for v in row["verdicts"])
            item = noise.get(item_id, {})
            floor = [] if not floors else ["–" if item.get("floor") is None else f"±{100 * item['floor']:.0f}"]
            t.add_row(item_id, f"{verdicts} {row['success']['num']}/{row['success']['den']}",
                      _pct(item.get("flip_rate")), *floor, _statuses(row["statuses"], "\n"))
        console.print(t)
        if not floors and report["by_item"]:
            console.print(f"  per item, no difference in success can be called real over "
                          f"{report['trials_per_item']} trials (an item needs 6 or more)",
                          highlight=False, markup=False)
        t = _table(f"Stages: {run} (index from 0)", "#stage", "#reached", "#passed", "failures ending here")
        for stage, row in report["by_stage"].items():
            passed = row["passed"]
            t.add_row(stage, str(row["reached"]), f"{passed['num']} ({_pct(passed['rate'])})",
                      _statuses(row["ended_here"]))
        console.print(t)
        reasons = report["failure_reasons"]
        if not reasons:
            console.print(f"Failure reasons: {run}: no failure", highlight=False, markup=False)
            continue
        t = _table(f"Failure reasons: {run}", "reason", "#trials", "#share", "#items", "at stage: trials")
        for status, row in reasons.items():
            stages = ", ".join(f"{s}: {n}" for s, n in row["at_stage"].items()) or "–"
            t.add_row(status.replace("_", " "), str(row["trials"]), _pct(row["share"]),
                      str(len(row["items"])), stages)
        console.print(t)
        for status, row in reasons.items():
            if row["example"]:
                example = row["example"] if len(row["example"]) <= 200 else row["example"][:199] + "..."
                console.print(f"  {status}, e.g.: {example}", highlight=False, markup=False)
