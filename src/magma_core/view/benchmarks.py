"""Benchmark results for the viewer: list rows and the page of one ``magma bench run``.

The numbers are the benchmark report's own (:func:`magma_core.bench.metrics.collect` and
:func:`~magma_core.bench.metrics.compute`, the significance of
:func:`magma_core.bench.report.significant_differences`), read through
the store's read-only :class:`~magma_core.store.reader.StoreReader` (it reads what those
functions read of a ``BenchStore``): the viewer never writes to the store, and the bench
package keeps the one definition of every metric.
"""

from __future__ import annotations

import time
from urllib.parse import quote

from magma_core.bench.metrics import agent_facts, collect, compute
from magma_core.bench.report import significant_differences
from magma_core.bench.report_tables import noise_comparisons
from magma_core.json_types import JSONDict
from magma_core.store.bench_store import bench_run_name
from magma_core.store.reader import RUNNING_WINDOW_S, StoreReader


def bench_runs(reader: StoreReader) -> list[JSONDict]:
    """Every benchmark run: name, suite, fingerprint, config, created_at."""
    return reader.bench_runs()


def bench_run_names(reader: StoreReader) -> set[str]:
    """The run-store runs that hold benchmark trials (shown on their benchmark's page)."""
    return {bench_run_name(b["name"]) for b in bench_runs(reader)}


def bench_of_run(reader: StoreReader, run_name: str) -> JSONDict | None:
    """``{"bench", "trials", "items"}`` (trials per item, item ids in episode order) when
    ``run_name`` holds a benchmark run's trials: episode ``i * trials + k`` is trial ``k`` of
    ``items[i]``."""
    for bench in bench_runs(reader):
        if bench_run_name(bench["name"]) == run_name:
            config = bench["config"]
            return {"bench": bench["name"], "trials": int(config.get("trials") or 1),
                    "items": [item["item_id"] for item in config.get("items", [])]}
    return None


def bench_items(reader: StoreReader) -> list[JSONDict]:
    """One home-list row per benchmark run, counted over its items' trials."""
    runs = {r["name"]: r for r in reader.runs()}
    rows = []
    for bench in bench_runs(reader):
        config = bench["config"]
        items = config.get("items", [])
        mine = [runs[n] for n in [bench_run_name(bench["name"])] if n in runs]
        statuses: dict[str, int] = {}
        for run in mine:
            for status, n in run["statuses"].items():
                statuses[status] = statuses.get(status, 0) + n
        done = sum(r["stored"] for r in mine)
        planned = len(items) * int(config.get("trials") or 1)
        updated = max([r["updated_at"] for r in mine] or [bench["created_at"]])
        state = ("complete" if done >= planned else
                 "running" if time.time() - updated < RUNNING_WINDOW_S else "incomplete")
        rows.append({
            "kind": "bench", "id": bench["name"], "title": bench["name"],
            "subtitle": f"suite {bench['suite']} · {len(items)} items × {config.get('trials')}",
            "agent": config.get("agent"), "state": state,
            "counts": {"episodes": done, "planned": planned, "statuses": statuses, "unit": "trials",
                       "stages_passed": sum(r["stages_passed"] for r in mine),
                       "stages_total": sum(r["stages_total"] for r in mine),
                       "total_tokens": sum(r["total_tokens"] for r in mine)},
            "created_at": bench["created_at"], "updated_at": updated,
            "href": f"#/benchmarks/{quote(bench['name'], safe='')}",
        })
    return rows


def bench_page(reader: StoreReader, name: str, compare: list[str] | None = None,
               price_per_mtok: float | None = None) -> JSONDict | None:
    """The benchmark run ``name``: its config, the report's metrics (of ``name`` and of the
    runs in ``compare``, with the significant differences from ``name`` and whether each is
    inside the noise floor), and every trial
    with a link to its episode. None when there is no such run."""
    bench = reader.get_bench(name)
    if bench is None:
        return None
    names = [name, *[c for c in (compare or []) if c != name and reader.get_bench(c)]]
    metrics = {}
    for run in names:
        trials, config = collect(reader, run)
        metrics[run] = compute(trials, config["trials"], price_per_mtok) | {
            "agent": agent_facts(config)}
    trials, config = collect(reader, name)
    run_name = bench_run_name(name)
    episodes = {e["episode"]: e for e in reader.episode_summaries(run_name)}
    others = [n for n in reader.list_benches() if n != name]
    significant = {k: sorted(v) for k, v in significant_differences(metrics).items()}
    rows = []
    position = {item["item_id"]: i for i, item in enumerate(config["items"])}
    for t in trials:
        episode = position[t.item["item_id"]] * config["trials"] + t.trial
        stored = episodes.get(episode)
        rows.append({
            "item_id": t.item["item_id"], "trial": t.trial, "condition": t.item["condition"],
            "track": t.item.get("track"), "length_bucket": t.item.get("length_bucket"),
            "control": t.item.get("control"), "status": t.status, "success": t.success,
            "stages_passed": t.stages_passed, "stages_total": t.stages_total, "tokens": t.tokens,
            "latency_s": t.latency_s, "run": run_name,
            "episode_status": stored["status"] if stored else None,
            "tool_calls": stored["tool_calls"] if stored else None,
            "wall_s": stored["wall_s"] if stored else None,
            "episode": episode,
            "href": (f"#/runs/{quote(run_name, safe='')}/episodes/{episode}" if stored else None),
        })
    public = {k: v for k, v in config.items() if k != "items"}
    return {"name": name, "suite": bench["suite"], "fingerprint": bench["fingerprint"],
            "created_at": bench["created_at"], "config": public, "items": config["items"],
            "metrics": metrics, "significant": significant, "noise_floor": noise_comparisons(metrics),
            "trials": rows,
            "planned": len(config["items"]) * config["trials"], "others": others,
            "price_per_mtok": price_per_mtok}
