"""The SQLite file every store table lives in: one connection per store object, WAL, one
``BEGIN IMMEDIATE`` transaction per finished unit.

:class:`SQLiteStore` is the base of :class:`~magma_core.store.RunStore` (and through it the
benchmark store) and :class:`~magma_core.store.GenerationStore`: it opens ``path`` (creating
its folder), applies a schema, and gives :meth:`SQLiteStore._transaction`, ``close`` and the
context-manager protocol.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Self


class SQLiteStore:
    """A store backed by the SQLite file at ``path`` with ``schema`` applied (idempotent DDL).

    ``foreign_keys``: enforce ``REFERENCES``; ``check_same_thread``: sqlite3's own check.
    """

    def __init__(self, path: str | Path, schema: str, *, foreign_keys: bool = False,
                 check_same_thread: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                     check_same_thread=check_same_thread)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        if foreign_keys:
            self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.executescript(schema)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit: committed when the block ends, rolled back if it raises."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _add_missing_columns(self, table: str, columns: Mapping[str, str]) -> None:
        """Add ``columns`` (name -> declaration) that a store made by an older MAGMA lacks."""
        have = {row["name"] for row in self._conn.execute(f"PRAGMA table_info({table})")}
        for name, declaration in columns.items():
            if name not in have:
                self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
