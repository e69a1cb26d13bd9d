"""Group starts from stored situations: "train from where it fails".

- :func:`generation_starts`: nodes of a ``magma gen`` generation. Each situation's whole-slot
  snapshot (as the generation store keeps it, with its tree's task and randomization) is restored
  as it is, and its stored agent memory opens the conversation.
- :func:`bench_failure_starts`: failed trials of a ``magma bench run``. The trial's task (its
  suite item's frozen task) is started with the trial's seed and the decisions the store
  recorded before the chosen one (default: the last, the one that failed) are replayed through
  the engine, each checked against its stored status; the conversation they make opens the
  rollouts, so the model decides the failed decision again from the same situation.

Both return a :class:`~magma_core.rl.tasks.TaskSource` for a
:class:`~magma_core.rl.env.TrainingEnv`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from magma_core.rl.tasks import StoredStart, TaskItem, TaskSource, suite_task
from magma_core.runs.assembly import load_task
from magma_core.simulation.data_structures import Decision, DecisionError, ToolCall
from magma_core.simulation.randomizer import RandomizationSpec, RuntimeRandomizer
from magma_core.simulation.tasks import task_from_json
from magma_core.store import STORE_FILE, open_generation_store
from magma_core.store.bench_store import bench_run_name, open_bench_store, trial_of
from magma_core.user_error import UserError

#: Episode statuses that are not a failure of the trial.
NOT_FAILED = ("success",)


def _store_path(folder: str | Path) -> Path:
    path = Path(folder) / STORE_FILE
    if not path.exists():
        raise UserError(f"no run store at {path}")
    return path


def generation_starts(folder: str | Path, generation: str,
                      situations: Iterable[int] | None = None) -> TaskSource:
    """The situations ``situations`` (ids; default: every one with a snapshot) of
    ``generation`` in the store of ``folder``, each a group start."""
    _store_path(folder)
    with open_generation_store(folder, read_only=True) as store:  # reading never writes
        row = store.get_generation(generation)
        if row is None:
            raise UserError(f"no generation {generation!r} in {folder}")
        trees = {t["tree"]: t for t in store.trees(generation)}
        stored = {s.id: s for s in store.situations(generation)}
        wanted = sorted(stored) if situations is None else list(situations)
        preset = None
        items = []
        for sid in wanted:
            situation = stored.get(sid)
            if situation is None:
                raise UserError(f"generation {generation} has no situation {sid}")
            blob = store.snapshot_blob(generation, sid)
            if blob is None:
                if situations is None:
                    continue
                raise UserError(f"situation {sid} of generation {generation} has no snapshot")
            tree = trees[situation.tree]
            if tree["task"] is not None:
                task = task_from_json(tree["task"])
            else:
                preset = preset or load_task(row["target"])
                task = preset
            randomization = None
            if tree["vocabulary"] is not None:
                randomization = RuntimeRandomizer(RandomizationSpec.from_dict(json.loads(tree["vocabulary"])))
            memory = situation.agent_input.get("memory") or {}
            origin = f"generation {generation} situation {sid}"
            items.append(TaskItem(f"{generation}#{sid}", task, int(tree["seed"]), randomization,
                                  StoredStart(origin, snapshot=blob, memory=memory),
                                  meta={"generation": generation, "situation": sid,
                                        "tree": situation.tree, "stage": situation.stage}))
    return TaskSource(f"gen.{generation}", items)


def bench_failure_starts(folder: str | Path, bench: str, suite: Any,
                         decision: int | None = None) -> TaskSource:
    """The failed trials of benchmark run ``bench`` (stored in ``folder``; ``suite``: its
    compiled suite, as ``load_suite`` returns it), each starting before its decision
    ``decision`` (default: its last decision, the one that failed)."""
    _store_path(folder)
    with open_bench_store(folder, create=False) as store:
        row = store.get_bench(bench)
        if row is None:
            raise UserError(f"no benchmark run {bench!r} in {folder}")
        if row["fingerprint"] != suite.fingerprint:
            raise UserError(f"benchmark run {bench} was made on suite fingerprint {row['fingerprint'][:12]}, "
                            f"not {suite.fingerprint[:12]}")
        config = row["config"]
        trials, base_seed = int(config["trials"]), int(config["seed"])
        run = bench_run_name(bench)
        items = []
        tasks: dict[int, Any] = {}
        for summary in store.episodes(run):
            if summary.status in NOT_FAILED:
                continue
            position, trial = trial_of(summary.episode, trials)
            item = suite.items[position]
            record = store.episode_record(run, summary.episode) or {}
            steps = record.get("steps") or []
            at = len(steps) - 1 if decision is None else decision
            if not steps or not 0 <= at < len(steps):
                continue
            if position not in tasks:
                tasks[position] = suite_task(item)
            origin = f"bench {bench} trial {summary.episode} ({item['item_id']}) decision {at}"
            start = StoredStart(origin, replay=tuple(_decision(s["decision"]) for s in steps[:at]),
                                expected=tuple(s["status"] for s in steps[:at]))
            items.append(TaskItem(f"{item['item_id']}/trial{trial}@{at}", tasks[position],
                                  base_seed + trial, start=start,
                                  meta={"bench": bench, "episode": summary.episode, "item_id": item["item_id"],
                                        "trial": trial, "decision": at, "status": summary.status}))
    if not items:
        raise UserError(f"benchmark run {bench} has no failed trial to start from")
    return TaskSource(f"bench.{bench}.failures", items)


def _decision(data: dict[str, Any]) -> Decision | DecisionError:
    """An engine decision from a record's step decision (as ``NormalizedDecision.to_dict``)."""
    if data.get("error"):
        return DecisionError("replayed_error", str(data["error"]))
    calls = [ToolCall(c["name"], c.get("arguments") if isinstance(c.get("arguments"), dict) else {},
                      c.get("target_robot_name")) for c in data.get("tool_calls") or []]
    return Decision(say=data.get("say") or "", tool_calls=calls)
