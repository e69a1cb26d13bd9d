"""Keeping a store for months: :func:`check_store` (is this file a sound MAGMA store?) and
:func:`backup_store` (SQLite's online backup, safe while a run writes). Both only read the
store (``magma store check|backup``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from magma_core.json_types import JSONDict
from magma_core.store.sqlite import (
    SQLITE_HEADER,
    STORE_VERSION,
    StoreError,
    describe_fault,
    store_version,
)


def check_store(path: str | Path) -> JSONDict:
    """What ``PRAGMA integrity_check`` and the marker say of the store at ``path``:
    ``{"path", "ok", "version", "problems": [one line each], "tables": {name: rows}}``."""
    path = Path(path)
    report: JSONDict = {"path": str(path), "ok": False, "version": None, "problems": [],
                              "tables": {}}
    if not path.exists():
        report["problems"].append(f"no store at {path}")
        return report
    with path.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            report["problems"].append(f"{path} is not an SQLite file (damaged or another program's)")
            return report
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as exc:
        report["problems"].append(describe_fault(path, exc))
        return report
    try:
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check(20)")]
        if problems != ["ok"]:
            report["problems"] += [f"integrity: {p}" for p in problems]
            return report
        report["version"] = version = store_version(conn, path)
        if version is not None and version > STORE_VERSION:
            report["problems"].append(f"store version {version} is newer than this MAGMA's "
                                      f"{STORE_VERSION}")
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                     "ORDER BY name").fetchall():
            report["tables"][table] = conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
    except StoreError as exc:
        report["problems"].append(str(exc))
    except sqlite3.Error as exc:
        report["problems"].append(describe_fault(path, exc))
    finally:
        conn.close()
    report["ok"] = not report["problems"]
    return report


def backup_store(path: str | Path, dest: str | Path) -> Path:
    """Copy the store at ``path`` to the new file ``dest`` with SQLite's online backup (a
    consistent copy even while another process writes); a damaged or foreign store, or an
    existing ``dest``, is a one-line :class:`StoreError`."""
    path, dest = Path(path), Path(dest)
    report = check_store(path)
    if not report["ok"]:
        raise StoreError(f"cannot back up {path}: {report['problems'][0]}")
    if dest.exists():
        raise StoreError(f"{dest} exists: choose a new file for the backup")
    dest.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        target = sqlite3.connect(dest)
        try:
            source.backup(target)
        except sqlite3.Error as exc:
            target.close()
            dest.unlink(missing_ok=True)
            raise StoreError(describe_fault(dest, exc)) from None
        target.close()
    finally:
        source.close()
    return dest
