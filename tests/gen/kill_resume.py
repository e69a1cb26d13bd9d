"""A ``magma gen`` command killed with SIGKILL part-way, for the resume tests."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ENV = {**os.environ, "COLUMNS": "200"}


def gen_command(folder: Path, target: str, nodes: int, *extra: str) -> list[str]:
    """``magma gen TARGET`` with noisy-trace:0.3, 2 slots, B=2, T=2, K=2, named ``k``."""
    return [sys.executable, "-m", "magma_core.cli", "gen", target, "--agent", "noisy-trace:0.3",
            "--slots", "2", "--branches", "2", "--max-nodes", str(nodes), "--trees", "2",
            "--max-per-stage", "2", *extra, "--out", str(folder), "--name", "k"]


def candidate_count(db: Path) -> int:
    """Candidates stored in ``db`` so far (0 while it does not exist yet)."""
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM gen_candidates").fetchone()[0]
    except sqlite3.Error:
        return 0


def kill_after(command: list[str], db: Path, candidates: int, timeout: float = 240) -> int:
    """Start ``command``, SIGKILL it once ``db`` holds ``candidates``; the count then."""
    proc = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + timeout
    while candidate_count(db) < candidates and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return candidate_count(db)


def run(command: list[str], timeout: float = 400) -> subprocess.CompletedProcess:
    """``command`` to its end, output captured."""
    return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=timeout)
