"""Read-only access to a run store for the viewer, safe while runs write to it.

Each call opens its own read-only SQLite connection (``mode=ro``; WAL lets readers run beside
the one writer), so the viewer never locks, creates or changes the store. A folder without a
store yet reads as empty: the viewer can be started before the first run.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from magma_core.store.run_store import unpack_world

#: A run whose store rows changed this recently, with episodes still to come, is "running".
RUNNING_WINDOW_S = 300.0

SUMMARY_COLUMNS = (
    "episode", "seed", "status", "stages_total", "stages_passed", "optimal", "acceptable",
    "exceeded", "tool_calls", "decisions", "wall_s", "total_tokens", "agent_latency_s",
    "finished_at",
)


#: What else changes the stamp, when its table exists: benchmark runs and generations.
STAMP_QUERIES = (
    ("bench_runs", "SELECT COUNT(*) FROM bench_runs"),
    ("generations", "SELECT COUNT(*), MAX(updated_at) FROM generations"),
    ("gen_candidates", "SELECT COUNT(*) FROM gen_candidates"),
)


class StoreReader:
    """Queries over the store ``folder/magma.db`` (see the module docstring)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "magma.db"

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection to the store (rows as ``sqlite3.Row``), or None when there
        is no store yet; closed on exit."""
        if not self.path.exists():
            yield None
            return
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        conn.row_factory = sqlite3.Row
        try:
            yield conn
        finally:
            conn.close()

    @staticmethod
    def _tables(conn: sqlite3.Connection) -> set[str]:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {r[0] for r in rows}

    # -- change detection ----------------------------------------------------------------
    def stamp(self) -> str:
        """A token that changes whenever runs or episodes are written (for live refresh)."""
        with self.connection() as conn:
            if conn is None or "runs" not in self._tables(conn):
                return "empty"
            runs = conn.execute("SELECT COUNT(*), MAX(updated_at) FROM runs").fetchone()
            episodes = conn.execute("SELECT COUNT(*), MAX(finished_at) FROM episodes").fetchone()
            stamp = f"{runs[0]}:{runs[1]}:{episodes[0]}:{episodes[1]}"
            tables = self._tables(conn)
            for table, query in STAMP_QUERIES:
                if table in tables:
                    stamp += ":" + ":".join(map(str, conn.execute(query).fetchone()))
            return stamp

    # -- runs ------------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        """Every run with its counts: episodes stored and planned, statuses, tokens, dates."""
        with self.connection() as conn:
            if conn is None or "runs" not in self._tables(conn):
                return []
            rows = conn.execute(
                """SELECT r.name, r.preset, r.config, r.created_at, r.updated_at,
                          COUNT(e.episode) AS stored,
                          COALESCE(SUM(e.stages_passed), 0) AS stages_passed,
                          COALESCE(SUM(e.stages_total), 0) AS stages_total,
                          COALESCE(SUM(e.total_tokens), 0) AS total_tokens,
                          COALESCE(SUM(e.wall_s), 0) AS wall_s
                   FROM runs r LEFT JOIN episodes e ON e.run_name = r.name
                   GROUP BY r.name ORDER BY r.created_at DESC"""
            ).fetchall()
            statuses = conn.execute(
                "SELECT run_name, status, COUNT(*) AS n FROM episodes GROUP BY run_name, status"
            ).fetchall()
        by_run: dict[str, dict[str, int]] = {}
        for row in statuses:
            by_run.setdefault(row["run_name"], {})[row["status"]] = row["n"]
        return [self._run_row(dict(r), by_run.get(r["name"], {})) for r in rows]

    @staticmethod
    def _run_row(row: dict[str, Any], statuses: dict[str, int]) -> dict[str, Any]:
        config = json.loads(row.pop("config") or "{}")
        planned = int(config.get("episodes") or row["stored"])
        if row["stored"] >= planned:
            state = "complete"
        elif time.time() - row["updated_at"] < RUNNING_WINDOW_S:
            state = "running"
        else:
            state = "incomplete"
        return row | {
            "config": config,
            "agent": config.get("agent"),
            "planned": planned,
            "statuses": statuses,
            "successes": statuses.get("success", 0),
            "state": state,
        }

    def run(self, name: str) -> dict[str, Any] | None:
        """One run with its episode summaries, or None."""
        for row in self.runs():
            if row["name"] == name:
                break
        else:
            return None
        with self.connection() as conn:
            assert conn is not None
            cols = ", ".join(SUMMARY_COLUMNS)
            episodes = conn.execute(
                f"SELECT {cols} FROM episodes WHERE run_name = ? ORDER BY episode", (name,)
            ).fetchall()
        return row | {"episodes": [dict(e) for e in episodes]}

    def episode(self, name: str, episode: int) -> dict[str, Any] | None:
        """One episode: its summary row and full record, or None."""
        with self.connection() as conn:
            if conn is None or "episodes" not in self._tables(conn):
                return None
            cols = ", ".join(SUMMARY_COLUMNS)
            row = conn.execute(
                f"SELECT {cols}, record FROM episodes WHERE run_name = ? AND episode = ?",
                (name, episode),
            ).fetchone()
        if row is None:
            return None
        summary = {k: row[k] for k in SUMMARY_COLUMNS}
        return {"run": name, "summary": summary, "record": json.loads(row["record"])}

    def world(self, name: str, episode: int) -> dict[str, Any] | None:
        """The episode's scene and world states, or None when it was stored without them."""
        with self.connection() as conn:
            if conn is None or "episode_worlds" not in self._tables(conn):
                return None
            row = conn.execute(
                "SELECT scene, states FROM episode_worlds WHERE run_name = ? AND episode = ?",
                (name, episode),
            ).fetchone()
        return None if row is None else unpack_world(row["scene"], row["states"])
