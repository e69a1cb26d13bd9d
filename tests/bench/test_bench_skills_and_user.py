"""``magma bench run --skills`` and ``--user``: the trials' engine runs with the scenario's
skills by name and the items' instructions in a simulated user's words, as ``magma run``."""

from __future__ import annotations

import pytest

from magma_core.agents.user_simulation import RuleParaphraser
from magma_core.bench.episodes import GroupJob, group_parts
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite, load_suite
from magma_core.cli import main
from magma_core.runs import RunSpec
from magma_core.scenarios import load_skills
from magma_core.store.reader import StoreReader

TEXT = "Sort the cubes: put the red cube in zone_a, then the green cube in zone_b, then the blue cube in zone_c."


@pytest.fixture
def suite(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\nconditions: [clean]\nskeletons:\n  - {preset: sorting.SortAll, track: in_domain}\n")
    compile_suite(spec, tmp_path / "suite")
    return tmp_path / "suite"


def test_a_groups_engine_gets_the_named_skills(suite, tmp_path):
    items = load_suite(suite).items
    job = GroupJob(RunSpec("sorting.SortAll", agent="trace", skills=("sort_all",)), items, 1, 0, 1,
                   tmp_path / "magma.db")
    assert group_parts(job).skills == load_skills("sorting.SortAll", ["sort_all"])
    plain = GroupJob(RunSpec("sorting.SortAll", agent="trace"), items, 1, 0, 1, tmp_path / "magma.db")
    assert group_parts(plain).skills is None


def test_an_unknown_skill_is_one_line_before_any_trial(suite, tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["bench", "run", str(suite), "--skills", "nope", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["magma: error: scenario 'sorting' has no skill 'nope' (skills: clear_zone, sort_all)"]
    assert not (out / "magma.db").exists() or not StoreReader(out, out / "magma.db").runs()


@pytest.mark.sim
def test_trials_run_with_skills_and_a_simulated_user(suite, tmp_path):
    out = tmp_path / "runs"
    result = run_bench(BenchSpec(suite, trials=2, agent="trace", out=out, name="b", skills=("all",),
                                 user="builtin"))
    assert result.ran == 2 and not result.errors
    store = StoreReader(out, out / "magma.db")
    config = store.get_run("bench.b")["config"]
    assert config["skills"] == ["all"] and config["user"] == "builtin"
    words = []
    for episode in (0, 1):
        record = store.episode_record("bench.b", episode)
        assert record["status"] == "success"
        words.append(record["steps"][0]["inputs"][0]["content"])
        assert words[-1] == RuleParaphraser().paraphrase(TEXT, int(record["seed"]) * 1000)
    assert words[0] != words[1]  # each trial's seed, its own words
