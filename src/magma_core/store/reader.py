"""``StoreReader``: every read the viewer and the exports make of a store, read-only.

Each call opens its own read-only SQLite connection (``mode=ro``; WAL lets readers run beside
the one writer), so a reader never locks, creates or changes the store. A folder without a
store yet reads as empty (the viewer can be started before the first run), and a store
without the benchmark or generation tables reads as having none.

The rows are the writing stores' own (:class:`~magma_core.store.RunStore`,
:class:`~magma_core.store.bench_store.BenchStore`,
:class:`~magma_core.store.GenerationStore`): the reader opens those classes over its
read-only connection (:func:`open_read_only`), so every query is written once; only the
summaries the viewer lists (counts per run and per generation, the change stamp) are
queries of their own.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from magma_core.json_types import JSONDict
from magma_core.store.bench_store import BenchStore
from magma_core.store.generation_store import CandidateRow, GenerationStore, SituationRow
from magma_core.store.run_store import EpisodeSummary, RunStore
from magma_core.store.sqlite import (
    STORE_VERSION,
    SQLiteStore,
    StoreError,
    check_header,
    describe_fault,
    store_version,
)

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.store.coaching_rows import CoachingRow

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

S = TypeVar("S", bound=SQLiteStore)


def open_read_only(cls: type[S], path: str | Path) -> S:
    """A ``cls`` store over a read-only connection to ``path`` (which must exist): its read
    methods work, its schema is not applied and any write raises ``sqlite3.OperationalError``.

    A file that is not SQLite, another program's, or a newer MAGMA's is refused with a
    one-line :class:`~magma_core.store.sqlite.StoreError`, as is any SQLite fault of opening
    it (a damaged file). The full ``quick_check`` is left to the writers and ``magma store
    check``: readers open the store on every request."""
    store = cls.__new__(cls)
    store.path = Path(path)
    store.read_only = True
    store._leases = []
    if store.path.stat().st_size > 0:  # an empty file reads as an empty store
        check_header(store.path)
    try:
        store._conn = sqlite3.connect(f"{store.path.resolve().as_uri()}?mode=ro", uri=True,
                                      timeout=10)
    except sqlite3.Error as exc:
        raise StoreError(describe_fault(store.path, exc)) from None
    store._conn.row_factory = sqlite3.Row
    try:
        version = store_version(store._conn, store.path)
        if version is not None and version > STORE_VERSION:
            raise StoreError(f"the store {store.path} has store schema version {version}, newer "
                             f"than this MAGMA's {STORE_VERSION}: upgrade MAGMA to read it")
    except StoreError:
        store._conn.close()
        raise
    except sqlite3.Error as exc:
        store._conn.close()
        raise StoreError(describe_fault(store.path, exc)) from None
    return store


class StoreReader:
    """Read-only queries over the store ``folder/magma.db`` (or ``path``; see the module
    docstring)."""

    def __init__(self, folder: str | Path, path: str | Path | None = None) -> None:
        self.folder = Path(folder)
        self.path = Path(path) if path is not None else self.folder / "magma.db"

    def exists(self) -> bool:
        return self.path.exists()

    @contextmanager
    def _open(self, cls: type[S], *tables: str) -> Iterator[S | None]:
        """A read-only ``cls`` store, or None when there is no store or it lacks ``tables``."""
        if not self.path.exists():
            yield None
            return
        store = open_read_only(cls, self.path)
        try:
            yield store if set(tables) <= _tables(store._conn) else None
        except sqlite3.Error as exc:  # a page damaged past what opening sees: one line
            if isinstance(exc, StoreError):
                raise
            raise StoreError(describe_fault(self.path, exc)) from None
        finally:
            store.close()

    # -- change detection ----------------------------------------------------------------
    def stamp(self) -> str:
        """A token that changes whenever runs or episodes are written (for live refresh)."""
        with self._open(RunStore, "runs", "episodes") as store:
            if store is None:
                return "empty"
            conn = store._conn
            runs = conn.execute("SELECT COUNT(*), MAX(updated_at) FROM runs").fetchone()
            episodes = conn.execute("SELECT COUNT(*), MAX(finished_at) FROM episodes").fetchone()
            stamp = f"{runs[0]}:{runs[1]}:{episodes[0]}:{episodes[1]}"
            tables = _tables(conn)
            for table, query in STAMP_QUERIES:
                if table in tables:
                    stamp += ":" + ":".join(map(str, conn.execute(query).fetchone()))
            return stamp

    # -- runs ------------------------------------------------------------------------------
    def runs(self) -> list[JSONDict]:
        """Every run with its counts: episodes stored and planned, statuses, tokens, dates."""
        with self._open(RunStore, "runs", "episodes") as store:
            if store is None:
                return []
            rows = store._conn.execute(
                """SELECT r.name, r.preset, r.config, r.created_at, r.updated_at,
                          COUNT(e.episode) AS stored,
                          COALESCE(SUM(e.stages_passed), 0) AS stages_passed,
                          COALESCE(SUM(e.stages_total), 0) AS stages_total,
                          COALESCE(SUM(e.total_tokens), 0) AS total_tokens,
                          COALESCE(SUM(e.wall_s), 0) AS wall_s
                   FROM runs r LEFT JOIN episodes e ON e.run_name = r.name
                   GROUP BY r.name ORDER BY r.created_at DESC"""
            ).fetchall()
            statuses = store._conn.execute(
                "SELECT run_name, status, COUNT(*) AS n FROM episodes GROUP BY run_name, status"
            ).fetchall()
        by_run: dict[str, dict[str, int]] = {}
        for row in statuses:
            by_run.setdefault(row["run_name"], {})[row["status"]] = row["n"]
        return [_run_row(dict(r), by_run.get(r["name"], {})) for r in rows]

    def get_run(self, name: str) -> JSONDict | None:
        """The run's stored row (``preset``, ``config``, dates), or None."""
        with self._open(RunStore, "runs") as store:
            return None if store is None else store.get_run(name)

    def run(self, name: str) -> JSONDict | None:
        """One run with its counts and episode summaries, or None."""
        for row in self.runs():
            if row["name"] == name:
                return row | {"episodes": self.episode_summaries(name)}
        return None

    def episode_summaries(self, run_name: str) -> list[JSONDict]:
        """The summary rows (:data:`SUMMARY_COLUMNS`) of the run's episodes, in order."""
        with self._open(RunStore, "episodes") as store:
            if store is None:
                return []
            rows = store._conn.execute(
                f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM episodes WHERE run_name = ? "
                "ORDER BY episode", (run_name,)).fetchall()
        return [dict(r) for r in rows]

    def episodes(self, run_name: str) -> list[EpisodeSummary]:
        """The run's episodes as the run store gives them."""
        with self._open(RunStore, "episodes") as store:
            return [] if store is None else store.episodes(run_name)

    def episode_record(self, run_name: str, episode: int) -> JSONDict | None:
        with self._open(RunStore, "episodes") as store:
            return None if store is None else store.episode_record(run_name, episode)

    def episode(self, name: str, episode: int) -> JSONDict | None:
        """One episode: its summary row and full record, or None."""
        with self._open(RunStore, "episodes") as store:
            if store is None:
                return None
            row = store._conn.execute(
                f"SELECT {', '.join(SUMMARY_COLUMNS)}, record FROM episodes "
                "WHERE run_name = ? AND episode = ?", (name, episode)).fetchone()
        if row is None:
            return None
        summary = {k: row[k] for k in SUMMARY_COLUMNS}
        return {"run": name, "summary": summary, "record": json.loads(row["record"])}

    def images(self, name: str, episode: int, decision: int | None = None) -> list[JSONDict]:
        """The camera images stored with the episode's decisions (``--observe images``)."""
        with self._open(RunStore, "decision_images") as store:
            return [] if store is None else store.episode_images(name, episode, decision)

    def control(self, name: str, episode: int) -> list[JSONDict]:
        """The control steps stored with the episode's decisions (``--record-control``)."""
        with self._open(RunStore, "control_steps") as store:
            return [] if store is None else store.episode_control(name, episode)

    def world(self, name: str, episode: int) -> JSONDict | None:
        """The episode's scene and world states, or None when it was stored without them."""
        with self._open(RunStore, "episode_worlds") as store:
            return None if store is None else store.episode_world(name, episode)

    # -- benchmark runs (what ``bench.metrics.collect`` reads of a BenchStore) -------------
    def bench_runs(self) -> list[JSONDict]:
        """Every benchmark run: name, suite, fingerprint, config, created_at."""
        with self._open(BenchStore, "bench_runs") as store:
            if store is None:
                return []
            return [store.get_bench(name) for name in store.list_benches()]

    def get_bench(self, name: str) -> JSONDict | None:
        with self._open(BenchStore, "bench_runs") as store:
            return None if store is None else store.get_bench(name)

    def list_benches(self) -> list[str]:
        with self._open(BenchStore, "bench_runs") as store:
            return [] if store is None else store.list_benches()

    def failures(self, bench: str) -> dict[str, int]:
        with self._open(BenchStore, "bench_failures") as store:
            return {} if store is None else store.failures(bench)

    def token_split(self, run_name: str) -> dict[int, tuple[int, int]]:
        with self._open(BenchStore, "episodes") as store:
            return {} if store is None else store.token_split(run_name)

    # -- generations -----------------------------------------------------------------------
    def generations(self) -> list[JSONDict]:
        """Every generation with its counts (situations, candidates, statuses) and state."""
        with self._open(GenerationStore, "generations", "gen_situations", "gen_candidates") as store:
            if store is None:
                return []
            rows = store.list_generations()
            statuses = store._conn.execute(
                "SELECT generation, episode_status, COUNT(*) AS n FROM gen_candidates "
                "GROUP BY generation, episode_status").fetchall()
            situations = dict(store._conn.execute(
                "SELECT generation, COUNT(*) FROM gen_situations GROUP BY generation").fetchall())
        by_gen: dict[str, dict[str, int]] = {}
        for r in statuses:
            by_gen.setdefault(r["generation"], {})[r["episode_status"]] = r["n"]
        out = []
        for r in rows:
            counts = by_gen.get(r["name"], {})
            state = ("complete" if r["finished"] else
                     "running" if time.time() - r["updated_at"] < RUNNING_WINDOW_S else "incomplete")
            out.append(r | {"statuses": counts, "state": state,
                            "counts": {"candidates": sum(counts.values()),
                                       "situations": situations.get(r["name"], 0),
                                       "successes": counts.get("success", 0)}})
        return out

    def get_generation(self, name: str) -> JSONDict | None:
        """The generation's stored row (``target``, ``config``, ``finished``), or None."""
        with self._open(GenerationStore, "generations") as store:
            return None if store is None else store.get_generation(name)

    def trees(self, name: str) -> list[JSONDict]:
        """The generation's trees (see :meth:`GenerationStore.trees`)."""
        with self._open(GenerationStore, "gen_trees") as store:
            return [] if store is None else store.trees(name)

    def situations(self, name: str) -> list[SituationRow]:
        with self._open(GenerationStore, "gen_situations") as store:
            return [] if store is None else store.situations(name)

    def candidates(self, name: str) -> list[CandidateRow]:
        with self._open(GenerationStore, "gen_candidates") as store:
            return [] if store is None else store.candidates(name)

    def situation(self, name: str, situation: int) -> SituationRow | None:
        with self._open(GenerationStore, "gen_situations") as store:
            return None if store is None else store.situation(name, situation)

    def candidate(self, name: str, candidate: int) -> CandidateRow | None:
        with self._open(GenerationStore, "gen_candidates") as store:
            return None if store is None else store.candidate(name, candidate)

    def candidate_control(self, name: str) -> dict[int, JSONDict]:
        """Candidate id -> the control steps it took (``magma gen --record-control``)."""
        with self._open(GenerationStore, "gen_control_steps") as store:
            return {} if store is None else store.candidate_control(name)

    def coaching(self, name: str) -> list[CoachingRow]:
        """The generation's coaching rows (see :mod:`magma_core.store.coaching_rows`)."""
        with self._open(GenerationStore, "gen_coaching") as store:
            return [] if store is None else store.coaching(name)

    def coaching_counts(self, name: str) -> dict[str, int]:
        """The generation's coaching opportunities by status and outcome."""
        with self._open(GenerationStore, "gen_coaching") as store:
            return {} if store is None else store.coaching_counts(name)


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows}


def _run_row(row: JSONDict, statuses: dict[str, int]) -> JSONDict:
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
