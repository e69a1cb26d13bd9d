"""``RunStore``: one SQLite file (WAL) holding runs, episodes and what happened in them.

Each finished episode is written in one transaction, so a killed run loses only the episodes in
flight, and running again with the same name resumes where it stopped.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from magma_core.json_types import JSONDict
from magma_core.store.control_steps import (
    CONTROL_SCHEMA,
    ControlRow,
    episode_control,
    insert_control,
)
from magma_core.store.images import IMAGES_SCHEMA, ImageRow, episode_images, insert_images
from magma_core.store.sqlite import STORE_VERSION, SQLiteStore
from magma_core.text_safety import safe_value
from magma_core.user_error import UserError

SCHEMA_VERSION = STORE_VERSION  # the marker and version live in store.sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    preset TEXT NOT NULL,
    config TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    run_name TEXT NOT NULL REFERENCES runs(name),
    episode INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    stages_total INTEGER NOT NULL,
    stages_passed INTEGER NOT NULL,
    optimal INTEGER NOT NULL,
    acceptable INTEGER NOT NULL,
    exceeded INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    agent_latency_s REAL NOT NULL DEFAULT 0,
    record TEXT NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (run_name, episode)
);
CREATE TABLE IF NOT EXISTS decisions (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    step INTEGER NOT NULL,
    stage INTEGER,
    instruction TEXT,
    say TEXT,
    status TEXT,
    PRIMARY KEY (run_name, episode, step)
);
CREATE TABLE IF NOT EXISTS tool_calls (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    step INTEGER NOT NULL,
    call INTEGER NOT NULL,
    robot TEXT,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    ok INTEGER NOT NULL,
    message TEXT,
    failure_flag TEXT,
    PRIMARY KEY (run_name, episode, step, call)
);
CREATE TABLE IF NOT EXISTS stage_outcomes (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    stage INTEGER NOT NULL,
    success TEXT NOT NULL,
    state TEXT,
    tool_calls INTEGER,
    forgiven_tool_calls INTEGER,
    PRIMARY KEY (run_name, episode, stage)
);
CREATE TABLE IF NOT EXISTS episode_worlds (
    run_name TEXT NOT NULL,
    episode INTEGER NOT NULL,
    scene TEXT NOT NULL,
    states BLOB NOT NULL,
    PRIMARY KEY (run_name, episode)
);
""" + IMAGES_SCHEMA + ";\n" + CONTROL_SCHEMA + ";\n"


def pack_world(world: JSONDict) -> tuple[str, bytes]:
    """(scene JSON, zlib-compressed JSON list of states) for the ``episode_worlds`` table."""
    states = json.dumps(world.get("states", []), separators=(",", ":")).encode()
    return json.dumps(world.get("scene", {}), sort_keys=True), zlib.compress(states, 6)


def unpack_world(scene: str, states: bytes) -> JSONDict:
    """The inverse of :func:`pack_world`."""
    return {"scene": json.loads(scene), "states": json.loads(zlib.decompress(states))}


@dataclass(frozen=True)
class EpisodeSummary:
    """The table row of a finished episode."""

    episode: int
    seed: int
    status: str
    stages_total: int
    stages_passed: int
    optimal: int
    acceptable: int
    exceeded: int
    tool_calls: int
    decisions: int
    wall_s: float
    total_tokens: int = 0  # tokens the agent's model used (prompt + completion)
    agent_latency_s: float = 0.0  # time spent waiting for the agent
    reason: str = ""  # why an episode that did not succeed ended (the record's reason)

    def to_dict(self) -> JSONDict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class EpisodeRows:
    """Normalised rows extracted from an episode record (see :func:`magma_core.store.episode_rows`)."""

    decisions: list[tuple] = ()  # (step, stage, instruction, say, status)
    tool_calls: list[tuple] = ()  # (step, call, robot, tool, arguments_json, ok, message, flag)
    stage_outcomes: list[tuple] = ()  # (stage, success, state, tool_calls, forgiven)
    world: JSONDict | None = None  # {"scene": ..., "states": [start, after step 0, ...]}
    images: tuple[ImageRow, ...] = ()  # (decision, camera, media_type, w, h, bytes): store.images
    control: tuple[ControlRow, ...] = ()  # (decision, steps, data): store.control_steps


class RunStore(SQLiteStore):
    """SQLite run store at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, *, check_same_thread: bool = True,
                 read_only: bool = False) -> None:
        super().__init__(path, _SCHEMA, foreign_keys=True, check_same_thread=check_same_thread,
                         read_only=read_only)

    # -- runs --------------------------------------------------------------------------
    def open_run(self, name: str, preset: str, config: JSONDict) -> JSONDict:
        """Create the run, or return the stored one. A run without episodes yet is started
        afresh with the new preset and config; resuming one with another preset is refused."""
        row = self._conn.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
        now = time.time()
        if row is not None and not self.finished_episodes(name):
            with self._transaction() as conn:
                conn.execute("DELETE FROM runs WHERE name = ?", (name,))
            row = None
        if row is None:
            with self._transaction() as conn:
                conn.execute(
                    "INSERT INTO runs(name, preset, config, created_at, updated_at) VALUES (?,?,?,?,?)",
                    (name, preset, json.dumps(config, sort_keys=True), now, now),
                )
            return {"name": name, "preset": preset, "config": config, "created_at": now}
        if row["preset"] != preset:
            raise UserError(
                f"run {name!r} exists for preset {row['preset']!r}, not {preset!r}; choose another --name"
            )
        return {
            "name": name,
            "preset": row["preset"],
            "config": json.loads(row["config"]),
            "created_at": row["created_at"],
        }

    def update_config(self, name: str, config: JSONDict) -> None:
        """Keep ``config`` as the run's configuration (the latest invocation's)."""
        with self._transaction() as conn:
            conn.execute(
                "UPDATE runs SET config = ?, updated_at = ? WHERE name = ?",
                (json.dumps(config, sort_keys=True), time.time(), name),
            )

    def list_runs(self) -> list[JSONDict]:
        rows = self._conn.execute(
            """SELECT r.name, r.preset, r.created_at, r.updated_at,
                      COUNT(e.episode) AS episodes,
                      SUM(e.status = 'success') AS successes
               FROM runs r LEFT JOIN episodes e ON e.run_name = r.name
               GROUP BY r.name ORDER BY r.created_at"""
        ).fetchall()
        return [dict(r) | {"successes": r["successes"] or 0} for r in rows]

    def get_run(self, name: str) -> JSONDict | None:
        row = self._conn.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return dict(row) | {"config": json.loads(row["config"])}

    # -- episodes ----------------------------------------------------------------------
    def finished_episodes(self, run_name: str) -> set[int]:
        rows = self._conn.execute(
            "SELECT episode FROM episodes WHERE run_name = ?", (run_name,)
        ).fetchall()
        return {r["episode"] for r in rows}

    def pending_episodes(self, run_name: str, episodes: int) -> list[int]:
        """The episode indices ``0 .. episodes-1`` of the run not stored yet, in order: what
        running (or resuming) the run still has to do."""
        done = self.finished_episodes(run_name)
        return [k for k in range(episodes) if k not in done]

    def save_episode(
        self,
        run_name: str,
        summary: EpisodeSummary,
        record: JSONDict,
        rows: EpisodeRows | None = None,
    ) -> None:
        """Write one finished episode and its rows atomically (replacing nothing: a duplicate
        episode index raises ``sqlite3.IntegrityError``)."""
        rows = safe_rows(rows or EpisodeRows())
        record = safe_value(record)  # agent strings are untrusted: no lone surrogate, NUL...
        key = (run_name, summary.episode)
        with self._transaction() as conn:
            conn.execute(
                """INSERT INTO episodes(run_name, episode, seed, status, stages_total, stages_passed,
                       optimal, acceptable, exceeded, tool_calls, decisions, wall_s, total_tokens,
                       agent_latency_s, record, finished_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    *key,
                    summary.seed,
                    summary.status,
                    summary.stages_total,
                    summary.stages_passed,
                    summary.optimal,
                    summary.acceptable,
                    summary.exceeded,
                    summary.tool_calls,
                    summary.decisions,
                    summary.wall_s,
                    summary.total_tokens,
                    summary.agent_latency_s,
                    json.dumps(record, default=str),
                    time.time(),
                ),
            )
            conn.executemany(
                "INSERT INTO decisions VALUES (?,?,?,?,?,?,?)", [(*key, *r) for r in rows.decisions]
            )
            conn.executemany(
                "INSERT INTO tool_calls VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(*key, *r) for r in rows.tool_calls],
            )
            conn.executemany(
                "INSERT INTO stage_outcomes VALUES (?,?,?,?,?,?,?)",
                [(*key, *r) for r in rows.stage_outcomes],
            )
            if rows.world is not None:
                conn.execute(
                    "INSERT INTO episode_worlds VALUES (?,?,?,?)", (*key, *pack_world(rows.world))
                )
            if rows.images:
                insert_images(conn, run_name, summary.episode, rows.images)
            if rows.control:
                insert_control(conn, run_name, summary.episode, rows.control)
            conn.execute("UPDATE runs SET updated_at = ? WHERE name = ?", (time.time(), run_name))

    def episodes(self, run_name: str) -> list[EpisodeSummary]:
        rows = self._conn.execute(
            "SELECT *, CASE WHEN status = 'success' THEN '' ELSE "
            "COALESCE(json_extract(record, '$.reason'), '') END AS reason FROM episodes "
            "WHERE run_name = ? ORDER BY episode", (run_name,)
        ).fetchall()
        fields = EpisodeSummary.__dataclass_fields__
        return [EpisodeSummary(**{k: r[k] for k in fields}) for r in rows]

    def episode_record(self, run_name: str, episode: int) -> JSONDict | None:
        row = self._conn.execute(
            "SELECT record FROM episodes WHERE run_name = ? AND episode = ?", (run_name, episode)
        ).fetchone()
        return None if row is None else json.loads(row["record"])

    def episode_world(self, run_name: str, episode: int) -> JSONDict | None:
        """The episode's scene and world states (None for episodes stored without them)."""
        row = self._conn.execute(
            "SELECT scene, states FROM episode_worlds WHERE run_name = ? AND episode = ?",
            (run_name, episode),
        ).fetchone()
        return None if row is None else unpack_world(row["scene"], row["states"])

    def episode_images(self, run_name: str, episode: int,
                       decision: int | None = None) -> list[JSONDict]:
        """The camera images the agent saw at each decision (see :mod:`.images`)."""
        return episode_images(self._conn, run_name, episode, decision)

    def episode_control(self, run_name: str, episode: int) -> list[JSONDict]:
        """The control steps of each decision (``--record-control``; see :mod:`.control_steps`)."""
        return episode_control(self._conn, run_name, episode)

    def count(self, table: str, run_name: str) -> int:
        if table not in {"episodes", "decisions", "tool_calls", "stage_outcomes"}:
            raise ValueError(f"unknown table {table!r}")
        return self._conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE run_name = ?", (run_name,)
        ).fetchone()[0]


def safe_rows(rows: EpisodeRows) -> EpisodeRows:
    """``rows`` with every string made safe (see :mod:`magma_core.text_safety`)."""
    def table(name: str) -> list[tuple]:
        return [tuple(safe_value(list(row))) for row in getattr(rows, name)]

    return EpisodeRows(
        decisions=table("decisions"),
        tool_calls=table("tool_calls"),
        stage_outcomes=table("stage_outcomes"),
        world=rows.world,  # numbers and names the engine wrote, not agent text
        images=tuple(rows.images),  # camera pictures the engine rendered
        control=tuple(rows.control),  # numbers the engine recorded
    )
