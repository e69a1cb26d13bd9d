"""Benchmark results for the viewer: list rows and the page of one ``magma bench run``.

The numbers are the benchmark report's own (:func:`magma_core.bench.metrics.collect` and
:func:`~magma_core.bench.metrics.compute`, the significance of
:func:`magma_core.bench.report.significant_differences`), read through :class:`BenchTables`,
a read-only stand-in for ``BenchStore`` over the viewer's connection: the viewer never writes
to the store, and the bench package keeps the one definition of every metric.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from magma_core.bench.metrics import collect, compute
from magma_core.bench.report import significant_differences
from magma_core.store.bench_store import bench_run_name
from magma_core.store.run_store import EpisodeSummary
from magma_core.view.reader import RUNNING_WINDOW_S, SUMMARY_COLUMNS, StoreReader


class BenchTables:
    """What ``metrics.collect`` reads of a ``BenchStore``, over a read-only connection."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    def get_bench(self, name: str) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT * FROM bench_runs WHERE name = ?", (name,)).fetchone()
        return None if row is None else dict(row) | {"config": json.loads(row["config"])}

    def list_benches(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM bench_runs ORDER BY created_at")]

    def failures(self, bench: str) -> dict[str, int]:
        if not _has_table(self._conn, "bench_failures"):
            return {}
        rows = self._conn.execute(
            "SELECT item_id, attempts FROM bench_failures WHERE bench = ?", (bench,)).fetchall()
        return {r["item_id"]: r["attempts"] for r in rows}

    def token_split(self, run_name: str) -> dict[int, tuple[int, int]]:
        rows = self._conn.execute(
            """SELECT episode, json_extract(record, '$.agent.prompt_tokens') AS p,
                      json_extract(record, '$.agent.completion_tokens') AS c
               FROM episodes WHERE run_name = ?""", (run_name,)).fetchall()
        return {r["episode"]: (int(r["p"] or 0), int(r["c"] or 0)) for r in rows}

    def episode_record(self, run_name: str, episode: int) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT record FROM episodes WHERE run_name = ? AND episode = ?",
                                 (run_name, episode)).fetchone()
        return None if row is None else json.loads(row["record"])

    def episodes(self, run_name: str) -> list[EpisodeSummary]:
        rows = self._conn.execute(
            "SELECT * FROM episodes WHERE run_name = ? ORDER BY episode", (run_name,)).fetchall()
        fields = EpisodeSummary.__dataclass_fields__
        return [EpisodeSummary(**{k: r[k] for k in fields if k in r.keys()}) for r in rows]


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None


def bench_runs(reader: StoreReader) -> list[dict[str, Any]]:
    """Every benchmark run: name, suite, config, created_at."""
    with reader.connection() as conn:
        if conn is None or not _has_table(conn, "bench_runs"):
            return []
        rows = conn.execute("SELECT name, suite, config, created_at FROM bench_runs").fetchall()
    return [dict(r) | {"config": json.loads(r["config"])} for r in rows]


def bench_run_names(reader: StoreReader) -> set[str]:
    """The run-store runs that hold benchmark trials (shown on their benchmark's page)."""
    return {bench_run_name(b["name"]) for b in bench_runs(reader)}


def bench_of_run(reader: StoreReader, run_name: str) -> dict[str, Any] | None:
    """``{"bench", "trials", "items"}`` (trials per item, item ids in episode order) when
    ``run_name`` holds a benchmark run's trials: episode ``i * trials + k`` is trial ``k`` of
    ``items[i]``."""
    for bench in bench_runs(reader):
        if bench_run_name(bench["name"]) == run_name:
            config = bench["config"]
            return {"bench": bench["name"], "trials": int(config.get("trials") or 1),
                    "items": [item["item_id"] for item in config.get("items", [])]}
    return None


def bench_items(reader: StoreReader) -> list[dict[str, Any]]:
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
               price_per_mtok: float | None = None) -> dict[str, Any] | None:
    """The benchmark run ``name``: its config, the report's metrics (of ``name`` and of the
    runs in ``compare``, with the significant differences from ``name``), and every trial
    with a link to its episode. None when there is no such run."""
    with reader.connection() as conn:
        if conn is None or not _has_table(conn, "bench_runs"):
            return None
        tables = BenchTables(conn, reader.path)
        bench = tables.get_bench(name)
        if bench is None:
            return None
        names = [name, *[c for c in (compare or []) if c != name and tables.get_bench(c)]]
        metrics = {}
        for run in names:
            trials, config = collect(tables, run)
            metrics[run] = compute(trials, config["trials"], price_per_mtok)
        trials, config = collect(tables, name)
        episodes = _episode_rows(conn, name, config)
        others = [n for n in tables.list_benches() if n != name]
    significant = {k: sorted(v) for k, v in significant_differences(metrics).items()}
    rows = []
    run_name = bench_run_name(name)
    position = {item["item_id"]: i for i, item in enumerate(config["items"])}
    for t in trials:
        episode = position[t.item["item_id"]] * config["trials"] + t.trial
        stored = episodes.get((run_name, episode))
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
            "metrics": metrics, "significant": significant, "trials": rows,
            "planned": len(config["items"]) * config["trials"], "others": others,
            "price_per_mtok": price_per_mtok}


def _episode_rows(conn: sqlite3.Connection, name: str,
                  config: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    runs = [bench_run_name(name)]
    cols = ", ".join(SUMMARY_COLUMNS)
    marks = ",".join("?" * len(runs))
    rows = conn.execute(f"SELECT run_name, {cols} FROM episodes WHERE run_name IN ({marks})",
                        runs).fetchall()
    return {(r["run_name"], r["episode"]): dict(r) for r in rows}
