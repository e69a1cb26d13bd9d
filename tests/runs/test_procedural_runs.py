"""``magma run DEFINITION`` and ``--randomized`` through the front door (real simulator)."""

from __future__ import annotations

import io
import json
import re

import pytest

from cli.conftest import magma
from magma_core.export.run_jsonl import export_jsonl
from magma_core.runs import RunSpec, UserError, run
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.tasks import task_to_json
from magma_core.store import open_store
from magma_scenarios.sorting.definitions import LongSorting
from magma_scenarios.sorting.presets import SortAll

pytestmark = pytest.mark.sim

CANONICAL = re.compile(r"(?<![A-Za-z0-9_])(red_cube|green_cube|blue_cube|yellow_cube|zone_a|"
                       r"zone_b|zone_c|pick|place|detect_objects)(?![A-Za-z0-9_])")


def _records(result):
    with open_store(result.store_path.parent, create=False) as store:
        return [store.episode_record(result.name, s.episode) for s in result.summaries]


def test_a_definition_runs_one_generated_task_per_episode(tmp_path):
    result = run(RunSpec("sorting.LongSorting", episodes=3, slots=2, seed=4, out=tmp_path))
    assert result.ok and [s.status for s in result.summaries] == ["success"] * 3
    records = _records(result)
    for k, record in enumerate(records):
        task = LongSorting().generate(4 + k)
        assert record["task"] == task.name == f"LongSorting #{4 + k}"
        assert record["num_stages"] == len(task.stages)
        assert record["stage_states"]["OPTIMAL"] == len(task.stages)
        assert record["randomization"] is None


def test_randomized_runs_store_each_episodes_mapping(tmp_path):
    result = run(RunSpec("sorting.LongSorting", episodes=2, slots=2, out=tmp_path,
                         randomized=True, name="rnd"))
    assert result.ok
    records = _records(result)
    for k, record in enumerate(records):
        tasks = EpisodeTasks(LongSorting(), randomized=True)
        assert record["randomization"] == tasks.task(k).randomization
        first_input = record["steps"][0]["inputs"][-1]["content"]
        assert first_input  # the engine's (canonical) input; the mapping says what the agent saw
    assert records[0]["randomization"] != records[1]["randomization"]
    # the steps export shows what the agent saw: public names only
    out = io.StringIO()
    with open_store(tmp_path, create=False) as store:
        assert export_jsonl(store, "rnd", "steps", out) == sum(len(r["steps"]) for r in records)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    for row in rows:
        public = {t["name"] for t in records[row["episode"]]["randomization"]["tools"]}
        assert {c["name"] for c in row["decision"]["tool_calls"]} <= public
        assert {c["tool"] for c in row["calls"]} <= public
    text = json.dumps([[r["inputs"], r["decision"], r["calls"]] for r in rows])
    assert CANONICAL.search(text) is None, CANONICAL.search(text)
    config = json.loads((tmp_path / "rnd.summary.json").read_text())["config"]
    assert config["randomized"] is True
    with pytest.raises(UserError, match="--randomized True"):
        run(RunSpec("sorting.LongSorting", episodes=3, out=tmp_path, name="rnd"))


def test_the_cli_runs_a_definition_randomized(tmp_path):
    proc = magma("run", "sorting.LongSorting", "--episodes", "2", "--slots", "2", "--randomized",
                 "--out", "out", "--seed", "9", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    totals = json.loads((tmp_path / "out" / "sorting.LongSorting.summary.json").read_text())["totals"]
    assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"] >= 16


def test_definition_errors_are_one_line_before_any_episode(tmp_path):
    with pytest.raises(UserError, match="no judge was given"):
        run(RunSpec("sorting.LongSortingJudged", episodes=2, out=tmp_path))
    with pytest.raises(UserError, match="has no preset 'Nope' .*definitions: LongSorting"):
        run(RunSpec("sorting.Nope", out=tmp_path))
    proc = magma("run", "sorting.LongSortingJudged", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_episode_tasks_are_deterministic_and_refuse_targets_without_a_config():
    tasks = EpisodeTasks(LongSorting(), randomized=True)
    assert task_to_json(tasks.task(3)) == task_to_json(EpisodeTasks(LongSorting(), True).task(3))
    assert tasks.randomization(tasks.task(3), 3).spec.to_dict() == tasks.task(3).randomization
    preset = EpisodeTasks(SortAll(), randomized=True)
    assert preset.task(1) is preset.target
    assert preset.randomization(preset.target, 1).spec != preset.randomization(preset.target, 2).spec
    bare = SortAll()
    bare.randomized_config_path = ""
    with pytest.raises(ValueError, match="no randomized_config_path"):
        EpisodeTasks(bare, randomized=True)
    assert EpisodeTasks(bare).randomization(bare, 0) is None


def test_a_preset_with_skills_runs_randomized_through_the_front_door(tmp_path):
    result = run(RunSpec("sorting.SkillTwoArms", episodes=2, slots=2, out=tmp_path,
                         randomized=True, name="skills"))
    assert result.ok and [s.status for s in result.summaries] == ["success"] * 2
    for record in _records(result):
        public = {e["name"]: p for p, e in record["randomization"]["tool_equivalence"].items()}
        assert public["sort_all"] != "sort_all" and public["cancel_current_action"] == "cancel_current_action"
