"""Store faults stay contained: a file that is not a MAGMA store (garbage, truncated, damaged,
another program's, a newer version) is refused before anything is written; older stores are
migrated; reads never write; a second writer, a full disk and a held lock are one line; each
leaves what was stored as it was. ``magma store check|backup`` on real SQLite files."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from magma_core.store import (
    STORE_VERSION,
    EpisodeSummary,
    GenerationStore,
    RunStore,
    StoreError,
    open_store,
)
from magma_core.store.maintenance import backup_store, check_store

MAGMA = [sys.executable, "-m", "magma_core.cli"]


def _summary(episode: int) -> EpisodeSummary:
    return EpisodeSummary(episode=episode, seed=episode, status="success", stages_total=1,
                          stages_passed=1, optimal=1, acceptable=0, exceeded=0, tool_calls=1,
                          decisions=1, wall_s=0.1)


def _store(folder: Path, episodes: int = 3, big: int = 0) -> Path:
    with RunStore(folder / "magma.db") as store:
        store.open_run("r", "p.X", {})
        for k in range(episodes):
            store.save_episode("r", _summary(k), {"pad": "x" * big})
    return folder / "magma.db"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _magma(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MAGMA, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _one_line(proc: subprocess.CompletedProcess, code: int, text: str) -> None:
    assert proc.returncode == code, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert text in lines[0], lines[0]


def test_garbage_truncated_and_page_corrupted_files_are_refused_unchanged(tmp_path):
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "magma.db").write_bytes(os.urandom(5000))
    truncated = tmp_path / "truncated"
    truncated.mkdir()
    path = _store(truncated, episodes=40, big=3000)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    corrupted = tmp_path / "corrupted"
    corrupted.mkdir()
    path = _store(corrupted, episodes=40, big=3000)
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(2 * page, len(data) - page, 3 * page):  # scribble over b-tree pages
        data[offset : offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    for folder, says in ((garbage, "not a MAGMA store"), (truncated, "is damaged"),
                         (corrupted, "is damaged")):
        before = _digest(folder / "magma.db")
        with pytest.raises(StoreError, match=says):
            open_store(folder)
        with pytest.raises(StoreError, match=says):
            open_store(folder, create=False)
        proc = _magma("runs", "list", "--out", str(folder), cwd=tmp_path)
        _one_line(proc, 2, says)
        assert "magma store backup" in proc.stderr or "another --out" in proc.stderr
        assert _digest(folder / "magma.db") == before
        assert not check_store(folder / "magma.db")["ok"]
        assert _magma("store", "check", "--out", str(folder), cwd=tmp_path).returncode == 1


def test_another_programs_sqlite_file_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "magma.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO users VALUES (1, 'a@example.org')")
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="not a MAGMA store .*orders, users"):
        RunStore(path)
    with pytest.raises(StoreError, match="not a MAGMA store"):
        GenerationStore(path)
    _one_line(_magma("runs", "list", "--out", str(tmp_path), cwd=tmp_path), 2, "not a MAGMA store")
    _one_line(_magma("run", "cube.PickPlace", "--out", str(tmp_path), cwd=tmp_path), 2,
              "not a MAGMA store")
    assert _digest(path) == before
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert tables == {"users", "orders"}
    other = tmp_path / "runs_only"
    other.mkdir()
    with sqlite3.connect(other / "magma.db") as conn:  # a `runs` table that is not MAGMA's
        conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT)")
    conn.close()
    with pytest.raises(StoreError, match="not a MAGMA store"):
        open_store(other, create=False)


def test_a_newer_store_is_refused_and_an_unmarked_older_one_is_migrated(tmp_path):
    path = _store(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="version 99, newer than this MAGMA's"):
        open_store(tmp_path)
    assert _digest(path) == before
    # A store of version 2 (before the marker and the leases): adopted and migrated.
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        conn.execute("DELETE FROM meta WHERE key = 'format'")
        conn.execute("DROP TABLE magma_leases")
    conn.close()
    before = _digest(path)
    with open_store(tmp_path, create=False) as store:  # read-only: read, not migrated
        assert len(store.episodes("r")) == 3
    assert _digest(path) == before
    with open_store(tmp_path) as store:
        assert len(store.episodes("r")) == 3
    with sqlite3.connect(path) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        assert meta == {"schema_version": str(STORE_VERSION), "format": "magma"}
        assert conn.execute("SELECT COUNT(*) FROM magma_leases").fetchone()[0] == 0
    conn.close()
    # Version 1 has no migration: refused with one line.
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(StoreError, match="version 1.* no migration from it"):
        open_store(tmp_path)


def test_reading_never_writes(tmp_path):
    path = _store(tmp_path)
    before = _digest(path)
    with open_store(tmp_path, create=False) as store:
        assert [s.episode for s in store.episodes("r")] == [0, 1, 2]
        with pytest.raises(StoreError, match="cannot be written"):
            store.save_episode("r", _summary(7), {})
    proc = _magma("runs", "list", "--out", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0 and "r" in proc.stdout, proc.stderr
    assert _digest(path) == before


def test_a_second_writer_is_refused_in_one_line_and_a_dead_ones_lease_taken_over(tmp_path):
    path = _store(tmp_path)
    first = RunStore(path)
    first.lease("run", "r")
    second = RunStore(path)
    with pytest.raises(StoreError, match=rf"run 'r' is being written by pid {os.getpid()} on "):
        second.lease("run", "r")
    second.lease("run", "other")  # another name is free
    first.close()  # released
    second.lease("run", "r")
    second.close()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO magma_leases VALUES ('run', 'r', ?, ?, 0)",
                     (dead.pid, os.uname().nodename))
    conn.close()
    with RunStore(path) as third:
        third.lease("run", "r")  # stale: its process is gone
        assert third._conn.execute("SELECT pid FROM magma_leases WHERE name = 'r'").fetchone()[0] \
            == os.getpid()


def test_a_full_disk_is_one_line_and_loses_nothing_stored(tmp_path):
    path = _store(tmp_path)
    store = RunStore(path)
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(StoreError, match="is full .*free disk space and run the same command"):
        store.save_episode("r", _summary(5), {"pad": os.urandom(200_000).hex()})
    store.close()
    with open_store(tmp_path, create=False) as again:
        assert [s.episode for s in again.episodes("r")] == [0, 1, 2]


def test_a_lock_held_elsewhere_is_one_line(tmp_path):
    path = _store(tmp_path)
    store = RunStore(path)
    store._conn.execute("PRAGMA busy_timeout = 50")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match="is locked by another program"):
        store.save_episode("r", _summary(5), {})
    holder.execute("ROLLBACK")
    holder.close()
    store.save_episode("r", _summary(5), {})  # once free, writing goes on
    assert [s.episode for s in store.episodes("r")] == [0, 1, 2, 5]
    store.close()


def test_store_check_and_backup(tmp_path):
    path = _store(tmp_path)
    report = check_store(path)
    assert report["ok"] and report["version"] == STORE_VERSION and report["tables"]["episodes"] == 3
    proc = _magma("store", "backup", str(tmp_path / "copy.db"), "--out", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with RunStore(tmp_path / "copy.db", read_only=True) as copy:
        assert [s.episode for s in copy.episodes("r")] == [0, 1, 2]
    with pytest.raises(StoreError, match="exists"):
        backup_store(path, tmp_path / "copy.db")
    proc = _magma("store", "check", "--out", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0 and "ok, store version" in proc.stdout
