"""Reading the store into an :class:`~magma_core.export.rows.ExportForest`: generations (their
trees as stored) and runs (each episode a one-candidate-per-situation tree).

A run's episode record keeps each decision's input messages but not the tools and attributes
sent with them; those are the preset's (loaded by name), or for a run of a procedural definition
the task its episode's seed generates, with the robots the record names. Records keep canonical
names (a randomized run's mapping rides along in the record), so a run exports in canonical names.

Each candidate also says how the environment answered it (``kinds.failure_of``), whether the
episode succeeded with it, and for a coach's candidate which decision it repaired (the coaching
row's proposal); each tree whose task names an injected condition is noted in
``ExportForest.conditions``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from magma_core.export.kinds import condition_of, failure_of
from magma_core.export.rows import Candidate, ExportForest, Situation
from magma_core.json_types import JSONDict
from magma_core.render.images import stored_entry
from magma_core.scenarios import load_target
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.tasks import TaskDefinition, task_from_json
from magma_core.store import scores as sc
from magma_core.store.reader import StoreReader

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks import BaseTask
    from magma_core.store.generation_store import CandidateRow, SituationRow

#: Settings of a stored generation or run that place the work (how many slots ran it) and
#: cannot change a row: left out of the export's sources, so the same command with 1 or 4
#: slots exports the same bytes. The store keeps them.
PLACEMENT_SETTINGS = frozenset({"slots"})


def _data_config(config: JSONDict | None) -> JSONDict | None:
    """A stored configuration without its placement settings."""
    return None if config is None else {k: v for k, v in config.items() if k not in PLACEMENT_SETTINGS}


class SourceError(ValueError):
    """No generation or run of that name in the store (one-line message)."""


def load_forest(store_path: Path, name: str, *, coached: bool = True) -> ExportForest:
    """The generation or run ``name`` of the store at ``store_path``; without ``coached`` a
    generation's coached candidates (and what grew from them) are left out."""
    if not store_path.exists():
        raise SourceError(f"no store at {store_path}")
    store = StoreReader(store_path.parent, store_path)
    generation = store.get_generation(name)
    if generation is not None:
        forest = _from_generation(store, name, generation, coached)
    else:
        forest = _from_run(store, name)
    forest.store_path = store_path
    return forest


def _from_generation(store: StoreReader, name: str, generation: JSONDict,
                     coached: bool = True) -> ExportForest:
    source: JSONDict = {"kind": "generation", "name": name, "target": generation["target"],
                              "config": _data_config(generation["config"])}
    trees = store.trees(name)
    if any(t["task"] or t["vocabulary"] for t in trees):  # a definition's or a randomized generation
        source["trees"] = [_tree_source(t, generation["target"]) for t in trees]
    forest = ExportForest(sources=[source])
    for tree in source.get("trees") or []:
        if condition := condition_of(tree["task"]):
            forest.conditions[f"{name}:tree{tree['tree']}"] = condition
    candidates = store.candidates(name)
    dropped = set() if coached else _coached_subtrees(store.situations(name), candidates)
    repaired = _repaired(store, name) if coached else {}
    for s in store.situations(name):
        key = f"{name}:s{s.id}"
        parent = f"{name}:c{s.parent}" if s.parent is not None else None
        if s.parent not in dropped:
            forest.situations[key] = Situation(key, f"{name}:tree{s.tree}", s.agent_input, parent)
    for c in candidates:
        if c.id in dropped or f"{name}:s{c.situation}" not in forest.situations:
            continue
        usable = c.response_status == "completed" and c.execution is not None
        failure, ok_calls = failure_of(c.execution) if usable else (None, 0)
        faulty = repaired.get((c.situation, c.candidate_index)) if c.coaching else None
        forest.candidates[f"{name}:c{c.id}"] = Candidate(
            key=f"{name}:c{c.id}",
            situation=f"{name}:s{c.situation}",
            stage=c.stage,
            end=c.end_status,
            decision=c.output if usable else None,
            next_situation=f"{name}:s{c.next_situation}" if c.next_situation is not None else None,
            origin=_ORIGIN.get((c.coaching or {}).get("role"), "model"),
            failure=failure, ok_calls=ok_calls, final=c.episode_status == "success",
            repairs=f"{name}:c{faulty}" if faulty is not None else None,
        )
    if coached:
        forest.repairs = [(f"{name}:c{a}", f"{name}:c{b}") for a, b in _validated_repairs(store, name, candidates)]
    return forest


_ORIGIN = {"fixed": "coached", "recovery": "recovery"}


def _repaired(store: StoreReader, name: str) -> dict[tuple[int, int], int]:
    """(situation, candidate index) of each coached candidate -> the id of the decision its
    coach diagnosed as faulty (the coaching row's proposal it executes)."""
    out: dict[tuple[int, int], int] = {}
    for row in store.coaching(name):
        for p in row.proposals or []:
            if isinstance(p, dict) and {"situation", "candidate_index", "faulty"} <= set(p):
                out[(int(p["situation"]), int(p["candidate_index"]))] = int(p["faulty"])
    return out


def _coached_subtrees(situations: list[SituationRow], candidates: list[CandidateRow]) -> set[int]:
    """The ids of coached candidates and of every candidate below one."""
    below: dict[int, list[CandidateRow]] = {}
    for c in candidates:
        below.setdefault(c.situation, []).append(c)
    todo = [c for c in candidates if c.coaching]
    out: set[int] = set()
    while todo:
        c = todo.pop()
        out.add(c.id)
        if c.next_situation is not None:
            todo.extend(below.get(c.next_situation, []))
    return out


def _validated_repairs(store: StoreReader, name: str, candidates: list[CandidateRow]) -> list[tuple[int, int]]:
    """(coached candidate, the failed decision it replaced at the same situation) for every
    repair of a proven coaching attempt."""
    by_id = {c.id: c for c in candidates}
    parent_of = {s.id: s.parent for s in store.situations(name)}
    pairs = []
    for row in store.coaching(name):
        if row.outcome != "proven":
            continue
        path, node = set(), by_id.get(row.terminal)
        while node is not None:  # the failed branch, up to its root
            path.add(node.id)
            parent = parent_of.get(node.situation)
            node = by_id.get(parent) if parent is not None else None
        for c in candidates:
            if (c.coaching or {}).get("request") != row.id:
                continue
            rejected = [x.id for x in candidates if x.situation == c.situation and x.id in path]
            pairs.extend((c.id, r) for r in rejected)
    return pairs


def _tree_source(tree: JSONDict, target: str) -> JSONDict:
    """What the manifest says about a tree: its seed, its task (name and the SHA-256 of its
    stored JSON) and the vocabulary mapping its agent saw."""
    task = tree["task"]
    return {
        "tree": tree["tree"], "seed": tree["seed"],
        "task": json.loads(task)["name"] if task else target,
        "task_sha256": hashlib.sha256(task.encode()).hexdigest() if task else None,
        "randomization": json.loads(tree["vocabulary"]) if tree["vocabulary"] else None,
    }


def _from_run(runs: StoreReader, name: str) -> ExportForest:
    run = runs.get_run(name)
    if run is None:
        raise SourceError(f"no generation or run named {name!r} in {runs.path}")
    preset = run["preset"]
    forest = ExportForest(sources=[{"kind": "run", "name": name, "target": preset,
                                    "config": _data_config(run["config"])}])
    bench = (run["config"] or {}).get("bench")
    if bench:  # a benchmark run: each trial's task is its item's, frozen in the suite folder
        tasks = _bench_tasks(runs, bench)
        for summary in runs.episodes(name):
            record = runs.episode_record(name, summary.episode) or {}
            task = tasks(summary.episode)
            tools, attributes = _task_names(task)
            _add_episode(forest, name, summary.episode, record, tools, attributes,
                         runs.images(name, summary.episode), condition_of(getattr(task, "name", None)))
        return forest
    target_cls = load_target(preset)
    definition = EpisodeTasks(target_cls()) if issubclass(target_cls, TaskDefinition) else None
    task = target_cls() if definition is None else None
    tools, attributes = _task_names(task) if task is not None else ([], {})
    for summary in runs.episodes(name):
        record = runs.episode_record(name, summary.episode) or {}
        if definition is not None:
            task = definition.task(int(record.get("seed", summary.seed)))
            tools, attributes = _task_names(task)
        _add_episode(forest, name, summary.episode, record, tools, attributes,
                     runs.images(name, summary.episode), condition_of(getattr(task, "name", None)))
    return forest


def _bench_tasks(runs: StoreReader, bench: str) -> Callable[[int], BaseTask]:
    """``episode -> task`` of benchmark run ``bench``: trial k of the item at position i is
    episode ``i * K + k``; the item's frozen task is read from the suite folder the run
    names (``items/ITEM.json``); a moved or missing suite is a one-line :class:`SourceError`."""
    config = (runs.get_bench(bench) or {}).get("config") or {}
    folder, items, trials = Path(config.get("suite_dir", "")), config.get("items") or [], int(config.get("trials") or 1)
    cache: dict[int, BaseTask] = {}

    def task(episode: int) -> BaseTask:
        index = episode // trials
        if index not in cache:
            item_id = items[index]["item_id"] if index < len(items) else "?"
            try:
                spec = json.loads((folder / "items" / f"{item_id}.json").read_text())["task"]
            except (OSError, ValueError, KeyError) as exc:
                raise SourceError(f"benchmark run {bench!r}: cannot read item {item_id} of its suite "
                                  f"{folder} ({exc}); export from where the suite folder is") from None
            cache[index] = task_from_json(json.dumps(spec))
        return cache[index]

    return task


def _task_names(task: Any) -> tuple[list[JSONDict], JSONDict]:
    return task.Tools_cls.get_api_description(), dict(task.situation_init.attributes)


def _image_keys(images: list[JSONDict]) -> dict[int, JSONDict]:
    """Decision (from 1) -> the ``extra_keys`` its input carried: the stored camera images
    (``--observe images``) as protocol entries (``render.images.stored_entry``)."""
    out: dict[int, JSONDict] = {}
    for image in images:
        out.setdefault(int(image["decision"]), {"images": []})["images"].append(stored_entry(image))
    return out


def _add_episode(forest: ExportForest, run: str, episode: int, record: JSONDict,
                 tools: list[JSONDict], attributes: JSONDict,
                 images: list[JSONDict] | None = None, condition: str | None = None) -> None:
    attributes = dict(attributes, known_robots=list(record.get("robot_names") or []))
    if condition:
        forest.conditions[f"{run}:e{episode}"] = condition
    extra = _image_keys(images or [])
    steps = record.get("steps") or []
    previous: str | None = None
    for n, step in enumerate(steps):
        inputs = [m for m in step.get("inputs") or [] if m.get("content")]
        kind = inputs[-1]["kind"] if inputs else "env"
        content = "\n\n".join(m["content"] for m in inputs) if len(inputs) > 1 else (
            inputs[0]["content"] if inputs else "")
        key = f"{run}:e{episode}:s{n}"
        forest.situations[key] = Situation(
            key, f"{run}:e{episode}",
            {"id": n, "instruction": {"type": kind, "content": content}, "tools": tools,
             "attributes": attributes, "memory": {}, "num_outputs": 1,
             "extra_keys": extra.get(n + 1, {})},
            previous,
        )
        decision = step.get("decision") or {}
        usable = "error" not in decision
        success, state = step.get("stage_success"), step.get("stage_state")
        if success == "FINISH":
            end = {"OPTIMAL": sc.OPTIMAL, "ACCEPTABLE": sc.SUBOPTIMAL}.get(state, sc.UNASSESSED)
        elif success == "FAILED" or state == "EXCEEDED" or step.get("status") not in ("running", "success"):
            end = sc.ERROR
        else:
            end = sc.ONGOING
        last = n == len(steps) - 1
        candidate = f"{run}:e{episode}:c{n}"
        failure, ok_calls = failure_of(step) if usable else (None, 0)
        forest.candidates[candidate] = Candidate(
            key=candidate, situation=key, stage=int(step.get("stage_index") or 0), end=end,
            decision={"say": decision.get("say", ""), "tool_calls": decision.get("tool_calls", [])}
            if usable else None,
            next_situation=None if last else f"{run}:e{episode}:s{n + 1}",
            failure=failure, ok_calls=ok_calls, final=step.get("status") == "success",
        )
        previous = candidate
