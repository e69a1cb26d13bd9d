"""Generation trees in the run store (SQLite): generations, trees, situations, candidates.

A situation is one agent input (kept exactly as sent) with the whole-slot snapshot it
resumes; a candidate is one decision for it, its execution, its status and its links. Every
executed candidate is written together with the situation its outcome became, in one
transaction: a killed ``magma gen`` loses only the candidates in flight, and the same command
resumes from what is stored. Nothing is ever deleted.

Situation statuses: ``open`` (to be asked), ``parked`` (finished a stage; waits for the
per-stage cap), ``closed`` (the branch ends there, or everything was asked).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from magma_core.json_types import JSONDict
from magma_core.store.coaching_rows import CANDIDATE_COLUMNS, COACHING_SCHEMA, CoachingRows
from magma_core.store.control_steps import (
    GEN_CONTROL_SCHEMA,
    ControlRow,
    candidate_control,
    insert_candidate_control,
)
from magma_core.store.sqlite import SQLiteStore

OPEN, PARKED, CLOSED = "open", "parked", "closed"
#: gen_trees columns added since the first version: a definition's generated task
#: (``task_to_json``) and the vocabulary mapping of a randomised tree (JSON); NULL otherwise.
TREE_COLUMNS = {"task": "TEXT", "vocabulary": "TEXT"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    name TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS gen_trees (
    generation TEXT NOT NULL REFERENCES generations(name),
    tree INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    root INTEGER NOT NULL,
    tools TEXT NOT NULL,
    task TEXT,
    vocabulary TEXT,
    PRIMARY KEY (generation, tree)
);
CREATE TABLE IF NOT EXISTS gen_situations (
    generation TEXT NOT NULL REFERENCES generations(name),
    id INTEGER NOT NULL,
    tree INTEGER NOT NULL,
    parent INTEGER,
    stage INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    idle INTEGER NOT NULL,
    status TEXT NOT NULL,
    end_status TEXT,
    agent_input TEXT NOT NULL,
    snapshot BLOB,
    created_at REAL NOT NULL,
    PRIMARY KEY (generation, id)
);
CREATE TABLE IF NOT EXISTS gen_candidates (
    generation TEXT NOT NULL REFERENCES generations(name),
    id INTEGER NOT NULL,
    situation INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    tree INTEGER NOT NULL,
    stage INTEGER NOT NULL,
    response_status TEXT NOT NULL,
    output TEXT NOT NULL,
    memory TEXT NOT NULL,
    internal_steps TEXT NOT NULL,
    execution TEXT,
    status TEXT NOT NULL,
    end_status TEXT NOT NULL,
    episode_status TEXT NOT NULL,
    next_situation INTEGER,
    score TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (generation, id),
    UNIQUE (generation, situation, candidate_index)
);
CREATE INDEX IF NOT EXISTS gen_candidates_by_situation ON gen_candidates(generation, situation);
"""


@dataclass
class SituationRow:
    """A stored situation (``snapshot`` is loaded only on demand)."""

    id: int
    tree: int
    parent: int | None
    stage: int
    depth: int
    idle: int
    status: str
    end_status: str | None
    agent_input: JSONDict


@dataclass
class CandidateRow:
    """A stored candidate."""

    id: int
    situation: int
    candidate_index: int
    tree: int
    stage: int
    response_status: str
    output: JSONDict
    memory: JSONDict
    internal_steps: list[JSONDict]
    execution: JSONDict | None
    status: str
    end_status: str
    episode_status: str
    next_situation: int | None
    score: JSONDict | None
    coaching: JSONDict | None = None  # a coached candidate's record (store.coaching_rows)


@dataclass
class NewSituation:
    """A situation to insert (ids are given by the caller)."""

    id: int
    tree: int
    parent: int | None
    stage: int
    depth: int
    idle: int
    status: str
    end_status: str | None
    agent_input: JSONDict
    snapshot: bytes | None


class GenerationStore(CoachingRows, SQLiteStore):
    """The generation tables of the SQLite store at ``path`` (WAL; created on first use),
    with their coaching rows (:class:`~magma_core.store.coaching_rows.CoachingRows`)."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        super().__init__(path, SCHEMA + COACHING_SCHEMA + GEN_CONTROL_SCHEMA + ";", check_same_thread=False,
                         read_only=read_only)
        self._add_missing_columns("gen_trees", TREE_COLUMNS)
        self._add_missing_columns("gen_candidates", CANDIDATE_COLUMNS)

    # -- generations -------------------------------------------------------------------------
    def open_generation(self, name: str, target: str, config: JSONDict) -> JSONDict:
        """Create the generation or return the stored one; resuming with another target or
        other tree-shaping settings raises ``ValueError``."""
        row = self._conn.execute("SELECT * FROM generations WHERE name = ?", (name,)).fetchone()
        if row is None:
            now = time.time()
            with self._transaction() as conn:
                conn.execute(
                    "INSERT INTO generations(name, target, config, created_at, updated_at) VALUES (?,?,?,?,?)",
                    (name, target, json.dumps(config, sort_keys=True), now, now),
                )
            return {"name": name, "target": target, "config": config, "finished": False}
        stored = json.loads(row["config"])
        if row["target"] != target:
            raise ValueError(
                f"generation {name!r} exists for {row['target']!r}, not {target!r}; choose another --name"
            )
        return {"name": name, "target": row["target"], "config": stored, "finished": bool(row["finished"])}

    def update_generation(self, name: str, config: JSONDict, finished: bool) -> None:
        with self._transaction() as conn:
            conn.execute(
                "UPDATE generations SET config = ?, finished = ?, updated_at = ? WHERE name = ?",
                (json.dumps(config, sort_keys=True), int(finished), time.time(), name),
            )

    def list_generations(self) -> list[JSONDict]:
        rows = self._conn.execute("SELECT * FROM generations ORDER BY created_at").fetchall()
        return [dict(r) | {"config": json.loads(r["config"])} for r in rows]

    def get_generation(self, name: str) -> JSONDict | None:
        row = self._conn.execute("SELECT * FROM generations WHERE name = ?", (name,)).fetchone()
        return None if row is None else dict(row) | {"config": json.loads(row["config"])}

    # -- trees and nodes ---------------------------------------------------------------------
    def add_tree(
        self, name: str, tree: int, seed: int, tools: list[JSONDict], root: NewSituation,
        *, task: str | None = None, vocabulary: str | None = None,
    ) -> None:
        """Insert a tree and its root situation atomically; ``task`` (JSON) and
        ``vocabulary`` (JSON) when the tree runs its own task or vocabulary."""
        with self._transaction() as conn:
            conn.execute(
                """INSERT INTO gen_trees(generation, tree, seed, root, tools, task, vocabulary)
                   VALUES (?,?,?,?,?,?,?)""",
                (name, tree, seed, root.id, json.dumps(tools), task, vocabulary),
            )
            self._insert_situation(conn, name, root)

    def trees(self, name: str) -> list[JSONDict]:
        """Per tree: ``tree``, ``seed``, ``root``, ``tools`` (as the agent saw them), ``task``
        and ``vocabulary`` (JSON text or None)."""
        rows = self._conn.execute(
            """SELECT tree, seed, root, tools, task, vocabulary FROM gen_trees
               WHERE generation = ? ORDER BY tree""", (name,)
        ).fetchall()
        return [dict(r) | {"tools": json.loads(r["tools"])} for r in rows]

    def add_candidate(
        self, name: str, candidate: CandidateRow, child: NewSituation | None, close_situation: bool,
        control: ControlRow | None = None,
    ) -> None:
        """Insert one executed candidate and the situation it led to, atomically; with
        ``close_situation`` its situation is marked closed (all its candidates are stored);
        ``control``: its control steps (``--record-control``, :mod:`.control_steps`)."""
        with self._transaction() as conn:
            if child is not None:
                self._insert_situation(conn, name, child)
            self._insert_candidate(conn, name, candidate)
            if control is not None:
                insert_candidate_control(conn, name, control)
            if close_situation:
                conn.execute(
                    "UPDATE gen_situations SET status = ? WHERE generation = ? AND id = ?",
                    (CLOSED, name, candidate.situation),
                )

    def add_grown_tree(
        self, name: str, tree: int, seed: int, tools: list[JSONDict],
        situations: list[NewSituation], candidates: list[CandidateRow], *,
        task: str | None = None, vocabulary: str | None = None,
    ) -> None:
        """Insert a whole tree grown elsewhere (``magma gen --ray``), in one transaction: its
        situations (the first is the root) and candidates, ids as given."""
        with self._transaction() as conn:
            conn.execute(
                """INSERT INTO gen_trees(generation, tree, seed, root, tools, task, vocabulary)
                   VALUES (?,?,?,?,?,?,?)""",
                (name, tree, seed, situations[0].id, json.dumps(tools), task, vocabulary),
            )
            for situation in situations:
                self._insert_situation(conn, name, situation)
            for candidate in candidates:
                self._insert_candidate(conn, name, candidate)

    def next_ids(self, name: str) -> tuple[int, int]:
        """The first free situation id and candidate id of a generation."""
        one = self._conn.execute
        return (
            one("SELECT COALESCE(MAX(id), -1) + 1 FROM gen_situations WHERE generation = ?", (name,)).fetchone()[0],
            one("SELECT COALESCE(MAX(id), -1) + 1 FROM gen_candidates WHERE generation = ?", (name,)).fetchone()[0],
        )

    @staticmethod
    def _insert_candidate(conn: sqlite3.Connection, name: str, c: CandidateRow) -> None:
        conn.execute(
            """INSERT INTO gen_candidates(generation, id, situation, candidate_index, tree, stage,
                   response_status, output, memory, internal_steps, execution, status, end_status,
                   episode_status, next_situation, score, created_at, coaching)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            (
                name, c.id, c.situation, c.candidate_index, c.tree, c.stage, c.response_status,
                json.dumps(c.output), json.dumps(c.memory), json.dumps(c.internal_steps),
                None if c.execution is None else json.dumps(c.execution, default=str),
                c.status, c.end_status, c.episode_status, c.next_situation,
                None if c.score is None else json.dumps(c.score), time.time(),
                None if c.coaching is None else json.dumps(c.coaching),
            ),
        )

    def set_situation_status(self, name: str, situation: int, status: str) -> None:
        with self._transaction() as conn:
            conn.execute(
                "UPDATE gen_situations SET status = ? WHERE generation = ? AND id = ?",
                (status, name, situation),
            )

    def set_scores(self, name: str, scores: dict[int, JSONDict]) -> None:
        with self._transaction() as conn:
            conn.executemany(
                "UPDATE gen_candidates SET score = ? WHERE generation = ? AND id = ?",
                [(json.dumps(s), name, cid) for cid, s in scores.items()],
            )

    @staticmethod
    def _insert_situation(conn: sqlite3.Connection, name: str, s: NewSituation) -> None:
        conn.execute(
            """INSERT INTO gen_situations(generation, id, tree, parent, stage, depth, idle, status,
                   end_status, agent_input, snapshot, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)""",
            (
                name, s.id, s.tree, s.parent, s.stage, s.depth, s.idle, s.status, s.end_status,
                json.dumps(s.agent_input), s.snapshot, time.time(),
            ),
        )

    def situations(self, name: str) -> list[SituationRow]:
        rows = self._conn.execute(
            """SELECT id, tree, parent, stage, depth, idle, status, end_status, agent_input
               FROM gen_situations WHERE generation = ? ORDER BY id""",
            (name,),
        ).fetchall()
        return [_situation_row(r) for r in rows]

    def situation(self, name: str, situation: int) -> SituationRow | None:
        """One situation (without its snapshot), or None."""
        row = self._conn.execute(
            """SELECT id, tree, parent, stage, depth, idle, status, end_status, agent_input
               FROM gen_situations WHERE generation = ? AND id = ?""", (name, situation),
        ).fetchone()
        return None if row is None else _situation_row(row)

    def snapshot_blob(self, name: str, situation: int) -> bytes | None:
        row = self._conn.execute(
            "SELECT snapshot FROM gen_situations WHERE generation = ? AND id = ?", (name, situation)
        ).fetchone()
        return None if row is None else row["snapshot"]

    def candidates(self, name: str) -> list[CandidateRow]:
        rows = self._conn.execute(
            "SELECT * FROM gen_candidates WHERE generation = ? ORDER BY id", (name,)
        ).fetchall()
        return [_candidate_row(r) for r in rows]

    def candidate(self, name: str, candidate: int) -> CandidateRow | None:
        """One candidate, or None."""
        row = self._conn.execute(
            "SELECT * FROM gen_candidates WHERE generation = ? AND id = ?", (name, candidate)
        ).fetchone()
        return None if row is None else _candidate_row(row)

    def candidate_control(self, name: str) -> dict[int, JSONDict]:
        """Candidate id -> its control steps (``--record-control``; see :mod:`.control_steps`)."""
        return candidate_control(self._conn, name)

    def counts(self, name: str) -> dict[str, int]:
        """Situations, candidates and successful candidates of a generation."""
        one = self._conn.execute
        return {
            "situations": one("SELECT COUNT(*) FROM gen_situations WHERE generation = ?", (name,)).fetchone()[0],
            "candidates": one("SELECT COUNT(*) FROM gen_candidates WHERE generation = ?", (name,)).fetchone()[0],
            "successes": one(
                "SELECT COUNT(*) FROM gen_candidates WHERE generation = ? AND episode_status = 'success'",
                (name,),
            ).fetchone()[0],
        }


def _situation_row(r: sqlite3.Row) -> SituationRow:
    return SituationRow(**{k: r[k] for k in r.keys() if k != "agent_input"},
                        agent_input=json.loads(r["agent_input"]))


def _candidate_row(r: sqlite3.Row) -> CandidateRow:
    return CandidateRow(
        id=r["id"], situation=r["situation"], candidate_index=r["candidate_index"],
        tree=r["tree"], stage=r["stage"], response_status=r["response_status"],
        output=json.loads(r["output"]), memory=json.loads(r["memory"]),
        internal_steps=json.loads(r["internal_steps"]),
        execution=None if r["execution"] is None else json.loads(r["execution"]),
        status=r["status"], end_status=r["end_status"],
        episode_status=r["episode_status"], next_situation=r["next_situation"],
        score=None if r["score"] is None else json.loads(r["score"]),
        coaching=(json.loads(r["coaching"]) if "coaching" in r.keys() and r["coaching"] is not None
                  else None),  # a version-2 store read as it is may lack the column
    )
