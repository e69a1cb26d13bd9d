"""``bench_report(out, names, ...)``: the metrics of one or more benchmark runs, with the
differences from the first run that are significant (two-proportion z-test, p < 0.05) and,
on paired trials, whether each difference is inside the noise floor (exact McNemar,
:mod:`magma_core.bench.noise`), as a dict, rich tables, JSON and one self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from magma_core.agents.model_identity import describe
from magma_core.bench.conditions import CONDITIONS
from magma_core.bench.metrics import agent_facts, collect, compute
from magma_core.bench.prices import Price, price_for
from magma_core.bench.report_html import render
from magma_core.bench.report_tables import noise_comparisons, print_breakdown, print_noise
from magma_core.bench.stats import two_proportion_p
from magma_core.json_types import JSONDict
from magma_core.store.bench_store import open_bench_store

ALPHA = 0.05


def bench_report(out: str | Path, names: list[str], price_per_mtok: float | None = None,
                 prices: dict[str, Price] | None = None) -> dict[str, JSONDict]:
    """name -> metrics (:func:`magma_core.bench.metrics.compute`) for each benchmark run;
    ``prices`` (a price table, :mod:`magma_core.bench.prices`) prices each run's model."""
    reports = {}
    with open_bench_store(out, create=False) as store:
        for name in names:
            trials, config = collect(store, name)
            price = None
            if prices is not None:
                price = price_for(prices, config["agent"], sum(t.tokens for t in trials), name)
            reports[name] = compute(trials, config["trials"], price_per_mtok, price)
            reports[name]["agent"] = agent_facts(config)
    return reports


def agent_line(name: str, report: JSONDict) -> str:
    """``NAME: agent SPEC`` and, for a model, its name, endpoint and the options given."""
    agent = report.get("agent") or {}
    model = agent.get("model") or {}
    line = f"{name}: agent {agent.get('spec') or '?'}"
    if model.get("name"):
        line += f"; model {model['name']} at {model.get('endpoint')}"
    options = model.get("options") or {}
    if options:
        line += "; options " + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(options.items()))
    return line


def identity_line(report: JSONDict) -> str | None:
    """``  model identity: ENGINE VERSION; weights NAME sha256 DIGEST (SIZE); ...`` for a run
    that recorded its model's identity (None otherwise)."""
    shown = describe(((report.get("agent") or {}).get("model") or {}).get("identity"))
    return f"  model identity: {shown}" if shown else None


def significant_differences(reports: dict[str, JSONDict]) -> dict[str, set[str]]:
    """run -> the keys (``all``, ``clean``, conditions) where its success differs from the
    first run's at p < ``ALPHA``."""
    runs = list(reports)
    base = reports[runs[0]]
    out: dict[str, set[str]] = {}
    for run in runs[1:]:
        m = reports[run]
        pairs = {"all": (base["success"], m["success"]), "clean": (base["success_clean"], m["success_clean"])}
        pairs |= {c: (base["success_by_condition"].get(c), r) for c, r in m["success_by_condition"].items()}
        marked = set()
        for key, (a, b) in pairs.items():
            if a and b:
                p = two_proportion_p((a["num"], a["den"]), (b["num"], b["den"]))
                if p is not None and p < ALPHA:
                    marked.add(key)
        out[run] = marked
    return out


def write_html(reports: dict[str, JSONDict], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(render(reports, significant_differences(reports), noise_comparisons(reports)))
    return path


def write_json(reports: dict[str, JSONDict], path: str | Path) -> Path:
    path = Path(path)
    payload = {"runs": reports, "significant": {k: sorted(v) for k, v in
                                                significant_differences(reports).items()},
               "noise_floor": noise_comparisons(reports)}
    path.write_text(json.dumps(payload, indent=2, sort_keys=True))
    return path


def _cell(r: JSONDict | None, mark: bool = False) -> str:
    if not r or r.get("rate") is None:
        return "–"
    text = f"{100 * r['rate']:.1f}% {r['num']}/{r['den']} [{100 * r['low']:.0f}-{100 * r['high']:.0f}]"
    return f"[bold red]{text} *[/]" if mark else text


def print_report(reports: dict[str, JSONDict], console: Console | None = None) -> None:
    """The report as rich tables."""
    console = console or Console()
    runs = list(reports)
    for run in runs:
        console.print(agent_line(run, reports[run]), highlight=False, markup=False)
        identity = identity_line(reports[run])
        if identity:
            console.print(identity, highlight=False, markup=False)
    sig = significant_differences(reports)
    rows: list[tuple[str, str]] = [("all", "success"), ("clean", "success_clean")]
    table = _runs_table("Success (95% Wilson interval)", runs)
    for key, metric in rows:
        table.add_row(key, *[_cell(reports[r][metric], key in sig.get(r, set())) for r in runs])
    conditions = [c for c in reports[runs[0]]["success_by_condition"] if c != "clean"]
    for c in conditions:
        table.add_row(c, *[_cell(reports[r]["success_by_condition"].get(c), c in sig.get(r, set()))
                           for r in runs])
    console.print(table)
    for title, metric in (("Conditional robustness", "conditional_robustness"),
                          ("Success by length", "success_by_length"),
                          ("Success by track", "success_by_track"),
                          ("Success by domain", "success_by_domain"),
                          ("Mission-update retention by lag", "mission_update_retention_by_lag")):
        t = _runs_table(title, runs)
        for key in sorted({k for r in runs for k in reports[r].get(metric, {})}):
            t.add_row(key, *[_cell(reports[r].get(metric, {}).get(key)) for r in runs])
        console.print(t)
    for title, metric in (("Success by domain and condition", "success_by_domain_condition"),
                          ("Conditional robustness by domain", "conditional_robustness_by_domain")):
        t = _runs_table(title, runs, "domain / condition")
        for key in domain_rows(reports, metric):
            t.add_row(" / ".join(key), *[_cell(reports[r].get(metric, {}).get(key[0], {}).get(key[1]))
                                         for r in runs])
        console.print(t)
    t = _runs_table("pass^k", runs, "k")
    for k in reports[runs[0]]["pass_k"]:
        t.add_row(k, *[_fmt(reports[r]["pass_k"].get(k)) for r in runs])
    console.print(t)
    for run in runs:  # statuses as rows, conditions as columns: fits an 80-column terminal
        counts = reports[run]["terminal_status_counts"]
        t = Table(title=f"Terminal statuses by condition: {run}")
        t.add_column("status", min_width=max(len(w) for s in reports[runs[0]]["taxonomy"] for w in s.split("_")))
        for c in counts:
            t.add_column(c.replace("_", " "), justify="right", max_width=12)
        for s in reports[runs[0]]["taxonomy"]:
            t.add_row(s.replace("_", " "), *[str(counts[c].get(s, 0)) for c in counts])
        console.print(t)
    print_breakdown(reports, console)
    t = _runs_table("Usage and cost", runs)
    for key in reports[runs[0]]["usage"]:
        t.add_row(key, *[_fmt(reports[r]["usage"][key]) for r in runs])
    console.print(t)
    print_noise(reports, console)
    if len(runs) > 1:
        console.print("* differs from the first run at p < 0.05 (two-proportion z-test)")


def domain_rows(reports: dict[str, JSONDict], metric: str) -> list[tuple[str, str]]:
    """(domain, condition) pairs of a per-domain ``metric`` over ``reports``, domains sorted,
    conditions in their canonical order."""
    pairs = {(d, c) for m in reports.values() for d, per in m.get(metric, {}).items() for c in per}
    return sorted(pairs, key=lambda p: (p[0], CONDITIONS.index(p[1]) if p[1] in CONDITIONS else 99))


def _runs_table(title: str, runs: list[str], first: str = "") -> Table:
    """A table with a row-label column ``first`` and one column per run."""
    table = Table(title=title)
    table.add_column(first)
    for run in runs:
        table.add_column(run)
    return table


def _fmt(value: object) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
