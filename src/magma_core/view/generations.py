"""Generation trees for the viewer: list rows, a tree's nodes and one node's detail.

Read through the store's read-only :class:`~magma_core.store.reader.StoreReader` (the rows of
:mod:`magma_core.store.generation_store`); scores and the export's selection come from
:mod:`magma_core.store.scores`, so they mean what they mean there. A tree alternates situations (one agent input) and candidates (one decision for it).
"""

from __future__ import annotations

from urllib.parse import quote

from magma_core.json_types import JSONDict, JSONValue
from magma_core.runs.agent_steps import exchange_of
from magma_core.store import scores as sc
from magma_core.store.generation_store import CandidateRow, SituationRow
from magma_core.store.reader import StoreReader

SITUATION_COLUMNS = ("id", "tree", "parent", "stage", "depth", "idle", "status", "end_status")
CANDIDATE_COLUMNS = ("id", "situation", "candidate_index", "tree", "stage", "response_status",
                     "status", "end_status", "episode_status", "next_situation")


def generations(reader: StoreReader) -> list[JSONDict]:
    """Every generation with its counts (situations, candidates, statuses)."""
    return reader.generations()


def generation_items(reader: StoreReader) -> list[JSONDict]:
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


def generation_tree(reader: StoreReader, name: str) -> JSONDict | None:
    """The generation ``name`` with every tree's situations and candidates (without their
    inputs and outputs: see :func:`node_detail`), each candidate with its score, whether the
    export keeps it, and a one-line summary of its decision. None when there is none."""
    found = [g for g in generations(reader) if g["name"] == name]
    if not found:
        return None
    trees = [{k: t[k] for k in ("tree", "seed", "root")} for t in reader.trees(name)]
    situations = [_situation(s) for s in reader.situations(name)]
    candidates = [_candidate(c) | {"score": _score(c), "label": decision_label(c.output),
                                   "coaching": c.coaching}
                  for c in reader.candidates(name)]
    kept = _kept(candidates)
    for c in candidates:
        c["kept"] = c["id"] in kept
    return found[0] | {"trees": trees, "situations": situations, "candidates": candidates}


def _kept(candidates: list[JSONDict]) -> set[int]:
    """The candidates the export's selection keeps (scored ones only)."""
    per_situation: dict[int, dict[int, float]] = {}
    for c in candidates:
        if c["score"] is not None:
            per_situation.setdefault(c["situation"], {})[c["id"]] = c["score"]
    return {cid for scores in per_situation.values() for cid in sc.select(scores)}


def decision_label(output: JSONValue) -> str:
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


def _args(arguments: JSONValue) -> str:
    if isinstance(arguments, dict):
        return "(" + ", ".join(str(v) for v in arguments.values()) + ")"
    return "()"


def node_detail(reader: StoreReader, name: str, kind: str, node: int) -> JSONDict | None:
    """A situation (``kind`` "situation") with the input the agent saw, or a candidate with its
    situation's input, its decision, execution, memory, internal steps, score and ``agent``
    (tokens and model exchanges, as a run keeps them per decision)."""
    row = None
    if kind == "candidate":
        row = reader.candidate(name, node)
        if row is None:
            return None
    situation = reader.situation(name, row.situation if row is not None else node)
    if situation is None:
        return None
    out: JSONDict = {"situation": _situation(situation)
                           | {"agent_input": situation.agent_input}}
    if row is not None:
        coaching = None
        if row.coaching is not None or reader.coaching_counts(name):
            request = None if row.coaching is None else row.coaching.get("request")
            coaching = {"record": row.coaching,
                        "rows": _coaching_rows(reader, name, node, request)}
        out["candidate"] = _candidate(row) | {
            "output": row.output, "memory": row.memory, "internal_steps": row.internal_steps,
            "agent": exchange_of(row.internal_steps), "execution": row.execution,
            "results": row.score, "score": _score(row), "coaching": coaching}
    return out


def _coaching_rows(reader: StoreReader, name: str, candidate: int,
                   request: int | None) -> list[JSONDict]:
    """The coaching rows about a candidate: the one that made it (``request``) and those its
    branch's end raised (it is their terminal), each with its request, answer and raw reply."""
    out = []
    for r in reader.coaching(name):
        if r.terminal != candidate and r.id != request:
            continue
        item = {k: getattr(r, k) for k in ("id", "stage", "terminal", "event", "type", "status",
                                           "outcome", "source", "attempt", "reason", "raw",
                                           "request", "response", "diagnosis", "proposals")}
        item["made_this"] = r.id == request
        out.append(item)
    return out


def _situation(row: SituationRow) -> JSONDict:
    return {k: getattr(row, k) for k in SITUATION_COLUMNS}


def _candidate(row: CandidateRow) -> JSONDict:
    return {k: getattr(row, k) for k in CANDIDATE_COLUMNS}


def _score(row: CandidateRow) -> float | None:
    return None if row.score is None else sc.score(sc.results_from_json(row.score))
