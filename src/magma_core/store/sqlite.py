"""The SQLite file every store table lives in: opening it safely, one ``BEGIN IMMEDIATE``
transaction per finished unit, writer leases, and store faults as one line.

:class:`SQLiteStore` is the base of :class:`~magma_core.store.RunStore` (and through it the
benchmark store) and :class:`~magma_core.store.GenerationStore`. Opening a store:

- a file that is not SQLite, is damaged (``PRAGMA quick_check``), belongs to another program
  (tables MAGMA does not make) or was written by a newer MAGMA is refused *before anything
  is written*; a store of an older version is migrated by the explicit steps in
  :data:`MIGRATIONS` (stores made before the marker existed are recognised by their tables);
- ``read_only=True`` opens the file read-only (``mode=ro``): read commands never write (an
  older store is read as it is: its migrations only add);
- :meth:`SQLiteStore.lease` takes the writer lease of a run, benchmark or generation name:
  a second writer is refused with one line naming the holder (pid, host, since when), a
  lease whose process is dead on this host is taken over;
- every SQLite fault of a write (full disk, read-only file, lock held too long, damage) is a
  :class:`StoreError`: one line saying what to do, nothing stored before lost.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from magma_core.store.coaching_rows import CANDIDATE_COLUMNS, COACHING_SCHEMA
from magma_core.store.control_steps import add_control_table
from magma_core.store.images import add_images_table
from magma_core.user_error import UserError

#: The store format this MAGMA writes (the ``meta`` row ``schema_version``).
STORE_VERSION = 5
FORMAT = "magma"  # the ``meta`` row ``format``: the marker that this file is a MAGMA store
SQLITE_HEADER = b"SQLite format 3\x00"
QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024  # quick_check on open below this size (cheap)
LOCK_TIMEOUT_S = 30.0
#: Every table a MAGMA store may hold (a file with others belongs to another program).
MAGMA_TABLES = frozenset({
    "meta", "magma_leases", "runs", "episodes", "decisions", "tool_calls", "stage_outcomes",
    "episode_worlds", "bench_runs", "bench_failures", "generations", "gen_trees",
    "gen_situations", "gen_candidates", "gen_coaching", "decision_images", "control_steps",
    "gen_control_steps",
})
_BASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS magma_leases (
    kind TEXT NOT NULL, name TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    since REAL NOT NULL, PRIMARY KEY (kind, name)
);
"""


class StoreError(UserError, sqlite3.DatabaseError):
    """A store that cannot be opened or written; the message is one line saying what to do."""


def _create_base(conn: sqlite3.Connection) -> None:
    """The marker's and the leases' tables (statement by statement: ``executescript`` would
    commit the transaction it runs in)."""
    for statement in _BASE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


#: Columns a version-2 store may lack (added to MAGMA's tables over version 2's life).
V2_LATE_COLUMNS = {
    "gen_trees": {"task": "TEXT", "vocabulary": "TEXT"},
    "gen_candidates": CANDIDATE_COLUMNS,
}


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Version 2 (and the stores made before the marker): add the marker, the leases, the
    coaching table and the columns that came late in version 2 (tree tasks, coached
    candidates)."""
    _create_base(conn)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table, columns in V2_LATE_COLUMNS.items():
        if table not in tables:
            continue
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for name, declaration in columns.items():
            if name not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")
    if "generations" in tables:
        conn.execute(COACHING_SCHEMA)


#: version -> the step that brings a store of that version to the next one.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _v2_to_v3,
    3: add_images_table,  # the camera images of --observe images (store.images)
    4: add_control_table,  # the control steps of --record-control (store.control_steps)
}


def describe_fault(path: Path, exc: BaseException) -> str:
    """One line for an SQLite fault on the store at ``path``: what happened, what to do."""
    text = " ".join(str(exc).split())
    low = text.lower()
    if "full" in low:
        return (f"the store {path} is full ({text}): free disk space and run the same command "
                "again; what is stored stays")
    if "readonly" in low or "read-only" in low:
        return (f"the store {path} cannot be written ({text}): choose another --out folder or "
                "make it writable")
    if "locked" in low or "busy" in low:
        return (f"the store {path} is locked by another program for more than "
                f"{LOCK_TIMEOUT_S:.0f} s ({text}): run the same command again when it is done")
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return (f"the store {path} is damaged ({text}): restore it from a backup (magma store "
                "backup) or choose another --out folder; magma store check says more")
    if isinstance(exc, OSError):  # e.g. the folder is a file, or cannot be made
        return f"cannot open the run store {path} ({text}): choose another --out folder"
    return f"the store {path} failed ({text}); what is stored stays"


def is_store_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is an SQLite fault (for front ends that must not import sqlite3)."""
    return isinstance(exc, sqlite3.Error)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SQLiteStore:
    """A store backed by the SQLite file at ``path`` with ``schema`` applied (idempotent DDL).

    ``foreign_keys``: enforce ``REFERENCES``; ``check_same_thread``: sqlite3's own check;
    ``read_only``: open an existing store read-only (nothing is created or written).
    """

    def __init__(self, path: str | Path, schema: str, *, foreign_keys: bool = False,
                 check_same_thread: bool = True, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._leases: list[tuple[str, str]] = []
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists:
            check_header(self.path)
        elif read_only:
            raise StoreError(f"no store at {self.path}")
        try:
            if read_only:
                self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                             timeout=LOCK_TIMEOUT_S, isolation_level=None,
                                             check_same_thread=check_same_thread)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S,
                                             isolation_level=None,
                                             check_same_thread=check_same_thread)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(describe_fault(self.path, exc)) from None
        self._conn.row_factory = sqlite3.Row
        try:
            self._open(schema, exists, foreign_keys)
        except StoreError:
            self._conn.close()
            raise
        except (OSError, sqlite3.Error) as exc:
            self._conn.close()
            raise StoreError(describe_fault(self.path, exc)) from None

    def _open(self, schema: str, exists: bool, foreign_keys: bool) -> None:
        version = None
        if exists:
            if self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
                check = self._conn.execute("PRAGMA quick_check(1)").fetchone()[0]
                if check != "ok":
                    raise StoreError(describe_fault(self.path, sqlite3.DatabaseError(
                        f"database disk image is malformed: {check}")))
            version = store_version(self._conn, self.path)
            if version is not None and version > STORE_VERSION:
                raise StoreError(f"the store {self.path} has store schema version {version}, "
                                 f"newer than this MAGMA's {STORE_VERSION}: upgrade MAGMA or "
                                 "choose another --out folder")
            if version is not None and any(v not in MIGRATIONS
                                           for v in range(version, STORE_VERSION)):
                raise StoreError(f"the store {self.path} has store schema version {version}, and "
                                 f"this MAGMA writes version {STORE_VERSION} with no migration "
                                 "from it: choose another --out folder")
        if self.read_only:
            return
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        if foreign_keys:
            self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version or STORE_VERSION, STORE_VERSION):
                MIGRATIONS[step](self._conn)
            _create_base(self._conn)
            self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES "
                               "('schema_version', ?), ('format', ?)", (str(STORE_VERSION), FORMAT))
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        self._conn.executescript(schema)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit: committed when the block ends, rolled back if it raises. An
        SQLite fault is a one-line :class:`StoreError` (nothing of the unit is stored)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(describe_fault(self.path, exc)) from None
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            if self._conn.in_transaction:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, StoreError | sqlite3.IntegrityError):
                raise StoreError(describe_fault(self.path, exc)) from None
            raise

    def _add_missing_columns(self, table: str, columns: Mapping[str, str]) -> None:
        """Add ``columns`` (name -> declaration) that a store made by an older MAGMA lacks."""
        have = {row["name"] for row in self._conn.execute(f"PRAGMA table_info({table})")}
        for name, declaration in columns.items():
            if name not in have and not self.read_only:
                self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")

    # -- writer leases -------------------------------------------------------------------------
    def lease(self, kind: str, name: str) -> None:
        """Take the writer lease of ``kind`` ``name`` (e.g. "run", "cube.PickPlace") until
        :meth:`close`. Held by a live process: a one-line :class:`StoreError` naming it;
        held by a process that is dead on this host: taken over."""
        me, host = os.getpid(), socket.gethostname()
        with self._transaction() as conn:
            row = conn.execute("SELECT pid, host, since FROM magma_leases WHERE kind = ? AND "
                               "name = ?", (kind, name)).fetchone()
            if row is not None and (kind, name) not in self._leases:
                stale = row["host"] == host and not _process_alive(int(row["pid"]))
                if not stale:
                    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["since"]))
                    raise StoreError(
                        f"{kind} {name!r} is being written by pid {row['pid']} on {row['host']} "
                        f"since {since}: wait for it to end, or choose another --name")
            conn.execute("INSERT OR REPLACE INTO magma_leases(kind, name, pid, host, since) "
                         "VALUES (?, ?, ?, ?, ?)", (kind, name, me, host, time.time()))
        if (kind, name) not in self._leases:
            self._leases.append((kind, name))

    def _release_leases(self) -> None:
        me = os.getpid()
        for kind, name in self._leases:
            try:
                self._conn.execute("DELETE FROM magma_leases WHERE kind = ? AND name = ? AND "
                                   "pid = ?", (kind, name, me))
            except sqlite3.Error:
                pass  # a lease left behind is stale once this process is gone
        self._leases = []

    def close(self) -> None:
        self._release_leases()
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_header(path: Path) -> None:
    """Refuse (:class:`StoreError`) a file that does not start as an SQLite file does."""
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(describe_fault(path, exc)) from None
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a MAGMA store (not an SQLite file; damaged or another "
                         "program's): restore it from a backup or choose another --out folder")


def store_version(conn: sqlite3.Connection, path: Path) -> int | None:
    """The store version of an open SQLite file: None for an empty file; a file with tables
    MAGMA does not make is refused (:class:`StoreError`). A store made before the marker
    existed (MAGMA's tables, no ``format`` row) is version 2."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}
    if not tables:
        return None
    foreign = sorted(tables - MAGMA_TABLES)
    runs_columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)")} if "runs" in tables else {"name"}
    if foreign or "name" not in runs_columns:
        shown = ", ".join((foreign or ["runs"])[:5])
        raise StoreError(f"{path} is not a MAGMA store (it holds tables {shown} of another "
                         "program): choose another --out folder")
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) if "meta" in tables else {}
    if meta.get("format") not in (None, FORMAT):
        raise StoreError(f"{path} is not a MAGMA store (format {meta['format']!r}): choose "
                         "another --out folder")
    try:
        return int(meta.get("schema_version", 2))
    except ValueError:
        raise StoreError(f"{path} has an unreadable store version {meta['schema_version']!r}: "
                         "choose another --out folder") from None
