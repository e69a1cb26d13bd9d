"""Generation trees for the viewer: list rows, a tree's nodes and one node's detail.

Read straight from the ``generations``/``gen_*`` tables of ``magma gen``
(:mod:`magma_core.store.generation_store`) over the viewer's read-only connection; scores and
the export's selection come from :mod:`magma_core.gen.scores`, so they mean what they mean
there. A tree alternates situations (one agent input) and candidates (one decision for it).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any
from urllib.parse import quote

from magma_core.gen import scores as sc
from magma_core.runs.agent_steps import exchange_of
from magma_core.view.reader import RUNNING_WINDOW_S, StoreReader

SITUATION_COLUMNS = ("id", "tree", "parent", "stage", "depth", "idle", "status", "end_status")
CANDIDATE_COLUMNS = ("id", "situation", "candidate_index", "tree", "stage", "response_status",
                     "status", "end_status", "episode_status", "next_situation")


def _has_generations(conn: sqlite3.Connection | None) -> bool:
    return conn is not None and conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'gen_candidates'"
    ).fetchone() is not None


def generations(reader: StoreReader) -> list[dict[str, Any]]:
    """Every generation with its counts (situations, candidates, statuses)."""
    with reader.connection() as conn:
        if not _has_generations(conn):
            return []
        rows = conn.execute("SELECT * FROM generations ORDER BY created_at").fetchall()
        statuses = conn.execute(
            "SELECT generation, episode_status, COUNT(*) AS n FROM gen_candidates "
            "GROUP BY generation, episode_status").fetchall()
        situations = dict(conn.execute(
            "SELECT generation, COUNT(*) FROM gen_situations GROUP BY generation").fetchall())
    by_gen: dict[str, dict[str, int]] = {}
    for r in statuses:
        by_gen.setdefault(r["generation"], {})[r["episode_status"]] = r["n"]
    out = []
    for r in rows:
        config = json.loads(r["config"])
        counts = by_gen.get(r["name"], {})
        state = ("complete" if r["finished"] else
                 "running" if time.time() - r["updated_at"] < RUNNING_WINDOW_S else "incomplete")
        out.append(dict(r) | {"config": config, "statuses": counts, "state": state,
                              "counts": {"candidates": sum(counts.values()),
                                         "situations": situations.get(r["name"], 0),
                                         "successes": counts.get("success", 0)}})
    return out


def generation_items(reader: StoreReader) -> list[dict[str, Any]]:
    """One home-list row per generation."""
    rows = []
    for g in generations(reader):
        config = g["config"]
        rows.append({
            "kind": "gen", "id": g["name"], "title": g["name"], "subtitle": g["target"],
            "agent": config.get("agent"), "state": g["state"],
            "counts": {"episodes": g["counts"]["candidates"], "planned": config.get("max_nodes"),
                       "statuses": g["statuses"], "unit": "candidates",
                       "situations": g["counts"]["situations"]},
            "created_at": g["created_at"], "updated_at": g["updated_at"],
            "href": f"#/generations/{quote(g['name'], safe='')}",
        })
    return rows


def generation_tree(reader: StoreReader, name: str) -> dict[str, Any] | None:
    """The generation ``name`` with every tree's situations and candidates (without their
    inputs and outputs: see :func:`node_detail`), each candidate with its score, whether the
    export keeps it, and a one-line summary of its decision. None when there is none."""
    found = [g for g in generations(reader) if g["name"] == name]
    if not found:
        return None
    with reader.connection() as conn:
        assert conn is not None
        trees = [dict(r) for r in conn.execute(
            "SELECT tree, seed, root FROM gen_trees WHERE generation = ? ORDER BY tree", (name,))]
        situations = [dict(r) for r in conn.execute(
            f"SELECT {', '.join(SITUATION_COLUMNS)} FROM gen_situations WHERE generation = ? "
            "ORDER BY id", (name,))]
        coaching = ", coaching" if _has_coaching(conn) else ", NULL AS coaching"
        rows = conn.execute(
            f"SELECT {', '.join(CANDIDATE_COLUMNS)}, output, score{coaching} FROM gen_candidates "
            "WHERE generation = ? ORDER BY id", (name,)).fetchall()
    candidates = []
    for r in rows:
        result = None if r["score"] is None else sc.results_from_json(json.loads(r["score"]))
        candidates.append({k: r[k] for k in CANDIDATE_COLUMNS} | {
            "score": None if result is None else sc.score(result),
            "label": decision_label(json.loads(r["output"])),
            "coaching": None if r["coaching"] is None else json.loads(r["coaching"])})
    kept = _kept(candidates)
    for c in candidates:
        c["kept"] = c["id"] in kept
    return found[0] | {"trees": trees, "situations": situations, "candidates": candidates}


def _has_coaching(conn: sqlite3.Connection) -> bool:
    """Whether the store has coaching (a store made before coaching has neither)."""
    return any(r[1] == "coaching" for r in conn.execute("PRAGMA table_info(gen_candidates)"))


def _coaching_rows(conn: sqlite3.Connection, name: str, candidate: int, request: int | None) -> list[dict[str, Any]]:
    """The coaching rows about a candidate: the one that made it (``request``) and those its
    branch's end raised (it is their terminal), each with its request, answer and raw reply."""
    if not _has_coaching(conn):
        return []
    rows = conn.execute(
        "SELECT * FROM gen_coaching WHERE generation = ? AND (terminal = ? OR id = ?) ORDER BY id",
        (name, candidate, -1 if request is None else request)).fetchall()
    out = []
    for r in rows:
        item = {k: r[k] for k in ("id", "stage", "terminal", "event", "type", "status", "outcome",
                                  "source", "attempt", "reason", "raw")}
        for key in ("request", "response", "diagnosis", "proposals"):
            item[key] = None if r[key] is None else json.loads(r[key])
        item["made_this"] = r["id"] == request
        out.append(item)
    return out


def _kept(candidates: list[dict[str, Any]]) -> set[int]:
    """The candidates the export's selection keeps (scored ones only)."""
    per_situation: dict[int, dict[int, float]] = {}
    for c in candidates:
        if c["score"] is not None:
            per_situation.setdefault(c["situation"], {})[c["id"]] = c["score"]
    return {cid for scores in per_situation.values() for cid in sc.select(scores)}


def decision_label(output: Any) -> str:
    """A candidate's decision in one short line: its calls, else what it said."""
    if not isinstance(output, dict):
        return "?"
    calls = output.get("tool_calls") or []
    if isinstance(calls, list) and calls:
        names = [str(c.get("name", "?")) + _args(c.get("arguments")) for c in calls if isinstance(c, dict)]
        return ", ".join(names)[:80]
    say = output.get("say")
    if isinstance(say, str) and say:
        return f"“{say[:60]}”"
    return str(output.get("error") or "(nothing)")[:80]


def _args(arguments: Any) -> str:
    if isinstance(arguments, dict):
        return "(" + ", ".join(str(v) for v in arguments.values()) + ")"
    return "()"


def node_detail(reader: StoreReader, name: str, kind: str, node: int) -> dict[str, Any] | None:
    """A situation (``kind`` "situation") with the input the agent saw, or a candidate with its
    situation's input, its decision, execution, memory, internal steps, score and ``agent``
    (tokens and model exchanges, as a run keeps them per decision)."""
    with reader.connection() as conn:
        if not _has_generations(conn):
            return None
        assert conn is not None
        if kind == "candidate":
            row = conn.execute("SELECT * FROM gen_candidates WHERE generation = ? AND id = ?",
                               (name, node)).fetchone()
            if row is None:
                return None
            situation = row["situation"]
        else:
            row, situation = None, node
        srow = conn.execute(
            f"SELECT {', '.join(SITUATION_COLUMNS)}, agent_input FROM gen_situations "
            "WHERE generation = ? AND id = ?", (name, situation)).fetchone()
        coaching = None
        if row is not None and _has_coaching(conn):
            record = None if row["coaching"] is None else json.loads(row["coaching"])
            coaching = {"record": record, "rows": _coaching_rows(
                conn, name, node, None if record is None else record.get("request"))}
    if srow is None:
        return None
    out: dict[str, Any] = {"situation": {k: srow[k] for k in SITUATION_COLUMNS}
                           | {"agent_input": json.loads(srow["agent_input"])}}
    if row is not None:
        result = None if row["score"] is None else sc.results_from_json(json.loads(row["score"]))
        out["candidate"] = {k: row[k] for k in CANDIDATE_COLUMNS} | {
            "output": json.loads(row["output"]), "memory": json.loads(row["memory"]),
            "internal_steps": json.loads(row["internal_steps"]),
            "agent": exchange_of(json.loads(row["internal_steps"])),
            "execution": None if row["execution"] is None else json.loads(row["execution"]),
            "results": None if row["score"] is None else json.loads(row["score"]),
            "score": None if result is None else sc.score(result), "coaching": coaching}
    return out
