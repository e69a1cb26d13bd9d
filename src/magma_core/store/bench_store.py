"""``BenchStore``: the benchmark tables of a run store (``FOLDER/magma.db``).

A benchmark run is a name bound to a suite fingerprint and its settings (with the suite's
items in order); its trials are the episodes of one ordinary run named ``bench.<NAME>`` in the
same file (so their decisions, tool calls and stage outcomes are stored like any run's):
trial ``k`` of the item at position ``i`` is episode ``i * K + k`` (:func:`trial_of`). This
module adds the run's row and, per item, the infrastructure failures (attempts lost to an
agent or judge outage): after 3 the item's missing trials count as ``infrastructure_failure``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from magma_core.agents.model_identity import resume_form
from magma_core.json_types import JSONDict
from magma_core.store.run_store import RunStore
from magma_core.user_error import UserError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bench_runs (
    name TEXT PRIMARY KEY,
    suite TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_failures (
    bench TEXT NOT NULL REFERENCES bench_runs(name) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    last_error TEXT NOT NULL,
    PRIMARY KEY (bench, item_id)
);
"""
#: The settings a resumed benchmark run must keep.
RESUME_KEYS = ("agent", "judge", "trials", "seed")


def bench_run_name(bench: str) -> str:
    """The run-store run holding the trials of benchmark run ``bench``."""
    return f"bench.{bench}"


def trial_of(episode: int, trials: int) -> tuple[int, int]:
    """(item position, trial index) of episode ``episode`` of a run with ``trials`` per item."""
    return divmod(episode, trials)


class BenchStore(RunStore):
    """The run store with the benchmark tables."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        super().__init__(path, read_only=read_only)
        if not read_only:
            self._conn.executescript(_SCHEMA)

    def open_bench(self, name: str, suite: str, fingerprint: str,
                   config: JSONDict) -> bool:
        """Create the benchmark run, or check a resumed one: same suite fingerprint and the
        same agent, judge, trials and seed. True when it existed."""
        row = self._conn.execute("SELECT * FROM bench_runs WHERE name = ?", (name,)).fetchone()
        if row is None:
            with self._transaction() as conn:
                conn.execute("INSERT INTO bench_runs VALUES (?,?,?,?,?)",
                             (name, suite, fingerprint, json.dumps(config, sort_keys=True),
                              time.time()))
            return False
        if row["fingerprint"] != fingerprint:
            raise UserError(
                f"benchmark run {name!r} was made on suite {row['suite']} with fingerprint "
                f"{row['fingerprint'][:12]}, this suite is {fingerprint[:12]}; use another --name"
            )
        stored = json.loads(row["config"])
        for key in RESUME_KEYS:  # a loopback server's port may change (resume_form)
            if resume_form(stored.get(key)) != resume_form(config.get(key)):
                raise UserError(f"benchmark run {name!r} was started with --{key} "
                                f"{stored.get(key)!r}; resume with the same or another --name")
        return True

    def get_bench(self, name: str) -> JSONDict | None:
        row = self._conn.execute("SELECT * FROM bench_runs WHERE name = ?", (name,)).fetchone()
        return None if row is None else dict(row) | {"config": json.loads(row["config"])}

    def list_benches(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM bench_runs ORDER BY created_at")]

    def record_failure(self, bench: str, item_id: str, error: str) -> int:
        """Count one more lost attempt of ``item_id``; returns the attempts so far."""
        with self._transaction() as conn:
            conn.execute(
                """INSERT INTO bench_failures VALUES (?,?,1,?)
                   ON CONFLICT(bench, item_id) DO UPDATE
                   SET attempts = attempts + 1, last_error = excluded.last_error""",
                (bench, item_id, error))
        return self.failures(bench).get(item_id, 0)

    def token_split(self, run_name: str) -> dict[int, tuple[int, int]]:
        """episode -> (prompt tokens, completion tokens) of the run's stored episodes, from
        their records' agent totals (0 where a record has none)."""
        rows = self._conn.execute(
            """SELECT episode, json_extract(record, '$.agent.prompt_tokens') AS p,
                      json_extract(record, '$.agent.completion_tokens') AS c
               FROM episodes WHERE run_name = ?""", (run_name,)).fetchall()
        return {r["episode"]: (int(r["p"] or 0), int(r["c"] or 0)) for r in rows}

    def failures(self, bench: str) -> dict[str, int]:
        """item_id -> attempts lost to infrastructure failures."""
        rows = self._conn.execute(
            "SELECT item_id, attempts FROM bench_failures WHERE bench = ?", (bench,)).fetchall()
        return {r["item_id"]: r["attempts"] for r in rows}


def open_bench_store(folder: str | Path, *, create: bool = True) -> BenchStore:
    """The benchmark store ``folder/magma.db``, read-only when not ``create``; a one-line
    :class:`UserError` when it cannot be opened (or is missing and ``create`` is False)."""
    path = Path(folder) / "magma.db"
    if not create and not path.exists():
        raise UserError(f"no run store at {path}")
    return BenchStore(path, read_only=not create)  # faults: a one-line StoreError
