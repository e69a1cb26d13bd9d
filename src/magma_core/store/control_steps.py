"""Control steps in the run store: the joint state and command of every control step.

A run made with ``--record-control`` (:mod:`magma_core.simulation.executor.control_record`)
keeps, per (run, episode, decision), the control steps that decision's tool calls took, in
``control_steps``: one row each, the steps as zlib-compressed JSON
``{"rate": Hz, "joints": {robot: [names]}, "steps": [{"qpos", "action", "world"}, ...]}``.
``decision`` counts from 1 (decision *k*'s motion); 0 holds the steps taken before the
first decision (an entry transition's). A generation made with ``--record-control`` keeps each
executed candidate's steps in ``gen_control_steps``, one row per (generation, candidate), in the
same form. Runs and generations made without the flag have no rows. Both tables came with
store version 5 (:func:`add_control_table` is the migration from version 4).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from typing import Any

__all__ = ["CONTROL_SCHEMA", "GEN_CONTROL_SCHEMA", "ControlRow", "add_control_table", "candidate_control",
           "episode_control", "insert_candidate_control", "insert_control", "pack_control"]

CONTROL_TABLE = "control_steps"
CONTROL_SCHEMA = """
CREATE TABLE IF NOT EXISTS control_steps (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    decision INTEGER NOT NULL,
    steps INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_name, episode, decision)
)
"""

GEN_CONTROL_SCHEMA = """
CREATE TABLE IF NOT EXISTS gen_control_steps (
    generation TEXT NOT NULL,
    candidate INTEGER NOT NULL,
    steps INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (generation, candidate)
)
"""

#: (decision, number of steps, packed data) of one decision's control steps (for a
#: generation's candidate: its id as the decision).
ControlRow = tuple[int, int, bytes]


def add_control_table(conn: sqlite3.Connection) -> None:
    """Store version 4 -> 5: the ``control_steps`` and ``gen_control_steps`` tables (nothing
    else changes)."""
    conn.execute(CONTROL_SCHEMA)
    conn.execute(GEN_CONTROL_SCHEMA)


def pack_control(decision: int, rate: float | None, joints: dict[str, list[str]],
                 steps: list[dict[str, Any]]) -> ControlRow:
    """The row of one decision's steps (see the module)."""
    document = {"rate": rate, "joints": joints, "steps": steps}
    data = zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)
    return int(decision), len(steps), data


def insert_control(conn: sqlite3.Connection, run_name: str, episode: int,
                   rows: list[ControlRow] | tuple[ControlRow, ...]) -> None:
    """Write an episode's control steps (inside the caller's transaction)."""
    conn.executemany("INSERT INTO control_steps VALUES (?,?,?,?,?)",
                     [(run_name, episode, *row) for row in rows])


def episode_control(conn: sqlite3.Connection, run_name: str, episode: int) -> list[dict[str, Any]]:
    """An episode's control steps per decision, in decision order: ``{"decision", "rate",
    "joints", "steps"}`` each; ``[]`` for an episode recorded without them (or a store
    without the table: version 4, read-only)."""
    try:
        rows = conn.execute("SELECT decision, data FROM control_steps WHERE run_name = ? AND "
                            "episode = ? ORDER BY decision", (run_name, episode)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    return [{"decision": int(r[0]), **json.loads(zlib.decompress(r[1]))} for r in rows]


def insert_candidate_control(conn: sqlite3.Connection, generation: str, row: ControlRow) -> None:
    """Write one candidate's control steps (``row``'s decision is the candidate id; inside the
    caller's transaction)."""
    conn.execute("INSERT INTO gen_control_steps VALUES (?,?,?,?)", (generation, *row))


def candidate_control(conn: sqlite3.Connection, generation: str) -> dict[int, dict[str, Any]]:
    """Candidate id -> ``{"rate", "joints", "steps"}`` of every recorded candidate of a
    generation (``{}`` without rows or without the table)."""
    try:
        rows = conn.execute("SELECT candidate, data FROM gen_control_steps WHERE generation = ? "
                            "ORDER BY candidate", (generation,)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return {}
        raise
    return {int(r[0]): json.loads(zlib.decompress(r[1])) for r in rows}
