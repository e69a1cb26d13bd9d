"""The episodes of a LeRobot export, read from the store: a run's recorded episodes, and a
generation's kept paths (each a chain of recorded candidates from a tree's root).

A run episode is mapped from its stored record and its control steps as they are. A
generation has no episode records: a kept path (the candidates the export keeps, as the chat
formats keep them: ``ExportForest.kept_paths``) becomes one, each candidate a decision, its
situation's input the decision's input, its execution the calls and the stage verdict, its
origin (a coach's ``recovery``) marking recoveries. Each row carries what the exporter's
writer needs: the mapped episode (:func:`~.mapping.map_episode`), its robots and the world to
render it in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from magma_core.export.rows import ExportForest
from magma_core.export.settings import Notice
from magma_core.integrations.lerobot.mapping import map_episode
from magma_core.runs.assembly import load_task
from magma_core.simulation.tasks import task_from_json
from magma_core.simulation.tasks.completion import materialize_completion_stages
from magma_core.store.reader import StoreReader

__all__ = ["NO_CONTROL", "generation_rows", "path_record", "run_rows"]

NO_CONTROL = ("was made without --record-control: it has no control steps (make it again with "
              "--record-control to export it as a LeRobot dataset)")
#: ``(config, seed) -> [env id, env options, reset options]`` (None: no camera frames)
WorldOf = Callable[[dict[str, Any], int], list[Any]] | None
Rows = list[tuple[str, dict[str, Any]]]


def run_rows(reader: StoreReader, source: dict[str, Any], world_of: WorldOf, refused: list[str]) -> Rows:
    """``(episode key, row)`` per recorded episode of a run that took control steps."""
    name, config = str(source["name"]), source.get("config") or {}
    if not config.get("record_control"):
        refused.append(Notice(f"run {name} {NO_CONTROL}"))
        return []
    rows: Rows = []
    for summary in reader.episodes(name):
        record = reader.episode_record(name, summary.episode) or {}
        mapped = map_episode(record, reader.control(name, summary.episode))
        if not mapped["frames"]:
            refused.append(Notice(f"episode {summary.episode} of run {name} took no control steps "
                                  f"({summary.status}): left out"))
            continue
        key = f"{name}:e{summary.episode}"
        seed = int(record.get("seed", summary.seed))
        rows.append((key, {"id": key, "run": name, "episode": summary.episode, "seed": seed,
                           "robots": list(record.get("robot_names") or []),
                           "world": world_of(config, seed) if world_of else None, **mapped}))
    return rows


def stage_descriptions(tree: dict[str, Any], target: str, config: dict[str, Any]) -> dict[int, str]:
    """Stage index -> its goal description in a generation's tree (the engine's closing stage
    included); ``{}`` when the tree's task cannot be rebuilt here (the segments then name the
    stages by number)."""
    try:
        task = (task_from_json(tree["task"]) if tree.get("task")
                else load_task(target, dict(config.get("target_args") or {})))
        stages = materialize_completion_stages(task.stages, task.Tools_cls)
    except Exception:  # noqa: BLE001 - a scenario gone or changed: descriptions are cosmetic
        return {}
    return {i: str(getattr(stage, "stage_goal_description", "") or "") for i, stage in enumerate(stages)}


def path_record(path: list[tuple[Any, Any]], executions: dict[int, dict[str, Any]], task: str,
                robots: list[str], descriptions: dict[int, str] | None = None) -> dict[str, Any]:
    """The episode record a kept path of a generation stands for (see the module): ``steps``
    (stage, input, calls) per candidate and ``stages`` (with their ``descriptions``) with the
    verdict of each stage's last candidate."""
    steps, stages = [], {}
    for situation, candidate in path:
        execution = executions.get(candidate_id(candidate.key)) or {}
        instruction = situation.agent_input.get("instruction") or {}
        steps.append({"stage_index": candidate.stage,
                      "inputs": [{"kind": instruction.get("type", "env"), "content": instruction.get("content", "")}],
                      "calls": list(execution.get("calls") or [])})
        success = execution.get("stage_success")
        description = (descriptions or {}).get(candidate.stage, "")
        stages[candidate.stage] = {"index": candidate.stage, "name": "", "description": description, "started": True,
                                   "success": success if success in ("FINISH", "FAILED") else None,
                                   "state": execution.get("stage_state") if success == "FINISH" else None}
    status = executions.get(candidate_id(path[-1][1].key), {}).get("status", "")
    return {"task": task, "status": status, "robot_names": robots, "steps": steps,
            "stages": [stages[k] for k in sorted(stages)]}


def candidate_id(key: str) -> int:
    """The stored id of a generation candidate's forest key (``NAME:cID``)."""
    return int(key.rsplit(":c", 1)[1])


def generation_rows(reader: StoreReader, forest: ExportForest, source: dict[str, Any], min_score: float,
                    world_of: WorldOf, refused: list[str]) -> Rows:
    """``(tree, row)`` per kept path of a generation whose candidates took control steps."""
    name, config = str(source["name"]), source.get("config") or {}
    if not config.get("record_control"):
        refused.append(Notice(f"generation {name} {NO_CONTROL}"))
        return []
    control = reader.candidate_control(name)
    stored = {c.id: c for c in reader.candidates(name)}
    executions = {i: {**(c.execution or {}), "status": c.episode_status} for i, c in stored.items()}
    trees = {f"{name}:tree{t['tree']}": t for t in reader.trees(name)}
    target = str(source.get("target", ""))
    descriptions = {group: stage_descriptions(tree, target, config) for group, tree in trees.items()}
    robots = list(next(iter(control.values()))["joints"]) if control else []
    kept, _ = forest.selected(min_score)
    rows: Rows = []
    for path in forest.kept_paths(kept):
        if not path[0][1].key.startswith(f"{name}:"):
            continue  # another source's path
        group = path[0][0].group
        record = path_record(path, executions, target, robots, descriptions.get(group))
        blocks = [{**control[i], "decision": n + 1} for n, (_, c) in enumerate(path)
                  if (i := candidate_id(c.key)) in control]
        origins = {n + 1: c.origin for n, (_, c) in enumerate(path)}
        mapped = map_episode(record, blocks, origins)
        key = path[-1][1].key
        if not mapped["frames"]:
            refused.append(Notice(f"path to {key} of generation {name} took no control steps: left out"))
            continue
        seed = int(trees[group]["seed"]) if group in trees else 0
        rows.append((group, {"id": key, "run": name, "episode": key, "seed": seed, "robots": robots,
                             "world": world_of({"preset": source.get("target"), **config}, seed)
                             if world_of else None, **mapped}))
    return rows
