"""Coaching rows of a generation in the run store: every correction opportunity with its
request, the coach's answer and raw reply, the diagnosis, the proposals and their outcome.

One row per (terminal candidate, coaching type), so a resumed generation never asks twice:
``skipped`` (with the reason: budget, repeated type, nothing diagnosable), ``pending`` (asked,
no answer stored yet: asked again on resume), ``corrected`` / ``abandoned`` / ``error`` (the
coach's status). A corrected row's proposals name the situation and candidate index of each
coached candidate (role ``fixed`` or ``recovery``), which is stored as any candidate with its
``coaching`` record. ``outcome``: ``unproven`` until a coached continuation reaches the
stage's success (``proven``) or every one ended without it so far (``refuted``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict, JSONValue

if TYPE_CHECKING:  # named for the annotations only
    import sqlite3

COACHING_SCHEMA = """
CREATE TABLE IF NOT EXISTS gen_coaching (
    generation TEXT NOT NULL,
    id INTEGER NOT NULL,
    tree INTEGER NOT NULL,
    stage INTEGER NOT NULL,
    terminal INTEGER NOT NULL,
    event TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    source TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    reason TEXT,
    request TEXT,
    response TEXT,
    raw TEXT,
    diagnosis TEXT,
    proposals TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (generation, id),
    UNIQUE (generation, terminal, type)
);
"""
#: gen_candidates column added for coaching: a coached candidate's coaching record (JSON).
CANDIDATE_COLUMNS = {"coaching": "TEXT"}
_JSON = ("request", "response", "diagnosis", "proposals")


@dataclass
class CoachingRow:
    """One correction opportunity and what became of it."""

    id: int
    tree: int
    stage: int
    terminal: int
    event: str
    type: str
    status: str
    source: str
    attempt: int
    outcome: str | None = None
    reason: str | None = None
    request: JSONDict | None = None
    response: JSONDict | None = None
    raw: str | None = None
    diagnosis: JSONDict | None = None
    proposals: list[JSONDict] | None = None


class CoachingRows:
    """Methods of :class:`~magma_core.store.generation_store.GenerationStore` for coaching."""

    _conn: sqlite3.Connection

    def add_coaching(self, name: str, row: CoachingRow) -> None:
        """Insert an opportunity (``skipped`` or ``pending``)."""
        now = time.time()
        with self._transaction() as conn:  # type: ignore[attr-defined]
            conn.execute(
                """INSERT INTO gen_coaching(generation, id, tree, stage, terminal, event, type, status,
                       outcome, source, attempt, reason, request, response, raw, diagnosis, proposals,
                       created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (name, row.id, row.tree, row.stage, row.terminal, row.event, row.type, row.status,
                 row.outcome, row.source, row.attempt, row.reason, _dump(row.request),
                 _dump(row.response), row.raw, _dump(row.diagnosis), json.dumps(row.proposals or []),
                 now, now),
            )

    def answer_coaching(self, name: str, row_id: int, status: str, *, reason: str | None,
                        response: JSONDict | None, raw: str, diagnosis: JSONDict | None,
                        proposals: list[JSONDict], outcome: str | None) -> None:
        """Store the coach's answer (and the coached candidates it plans) in one transaction."""
        with self._transaction() as conn:  # type: ignore[attr-defined]
            conn.execute(
                """UPDATE gen_coaching SET status = ?, reason = ?, response = ?, raw = ?, diagnosis = ?,
                       proposals = ?, outcome = ?, updated_at = ? WHERE generation = ? AND id = ?""",
                (status, reason, _dump(response), raw, _dump(diagnosis), json.dumps(proposals), outcome,
                 time.time(), name, row_id),
            )

    def set_coaching_outcome(self, name: str, row_id: int, outcome: str) -> None:
        with self._transaction() as conn:  # type: ignore[attr-defined]
            conn.execute("UPDATE gen_coaching SET outcome = ?, updated_at = ? WHERE generation = ? AND id = ?",
                         (outcome, time.time(), name, row_id))

    def coaching(self, name: str) -> list[CoachingRow]:
        """Every coaching row of generation ``name``, by id."""
        rows = self._conn.execute("SELECT * FROM gen_coaching WHERE generation = ? ORDER BY id",
                                  (name,)).fetchall()
        out = []
        for r in rows:
            values = {k: r[k] for k in r.keys() if k not in ("generation", "created_at", "updated_at")}
            for key in _JSON:
                values[key] = None if values[key] is None else json.loads(values[key])
            out.append(CoachingRow(**values))
        return out

    def coaching_counts(self, name: str) -> dict[str, int]:
        """Opportunities by status and outcome (``corrected``, ``proven``, ...)."""
        out: dict[str, int] = {}
        for column in ("status", "outcome"):
            for value, count in self._conn.execute(
                f"SELECT {column}, COUNT(*) FROM gen_coaching WHERE generation = ? GROUP BY {column}",
                (name,),
            ).fetchall():
                if value is not None:
                    out[value] = out.get(value, 0) + count
        return out


def _dump(value: JSONValue) -> str | None:
    return None if value is None else json.dumps(value)
