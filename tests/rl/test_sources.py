"""Task sources on the real engine: definitions, suite items, randomized vocabularies, and
stored situations (a generation node, a failed benchmark trial) as group starts."""

from __future__ import annotations

import pytest

from magma_core.bench.suite import load_suite
from magma_core.cli import main
from magma_core.rl import TaskSource, TrainingEnv
from magma_core.rl.starts import bench_failure_starts, generation_starts
from magma_core.user_error import UserError

pytestmark = pytest.mark.sim

CUBE_SUITE = """\
name: cube-smoke
description: PickPlace, clean only.
transforms: magma_scenarios.sorting.bench_conditions
conditions: [clean]
skeletons:
  - {preset: cube.PickPlace, track: in_domain}
"""


def _solve(rollout, decisions):
    result = None
    for decision in decisions:
        result = rollout.step(rollout.message_for(decision))
        if result.done:
            break
    return result


def test_a_definition_with_seeds_runs_its_generated_tasks(tmp_path):
    source = TaskSource.target("sorting.LongSorting", seeds=[3, 4])
    assert source.ids == ["sorting.LongSorting@3", "sorting.LongSorting@4"]
    with TrainingEnv(source, slots=2, out=tmp_path, backend="cpu") as env:
        digests = []
        for index in range(2):
            group = env.group(index, size=1)
            obs = group.reset()
            assert obs[0].messages[-1]["role"] == "user"
            digests.append(obs[0].digest)
            trace = source[index].task.perfect_trace().decisions()
            result = _solve(group[0], trace)
            assert result.done and result.info["status"] == "success", result.info
            assert group[0].record["task"] == source[index].task.name
        assert digests[0] != digests[1]


def test_randomized_vocabulary_is_what_the_tools_and_prompt_say(tmp_path):
    source = TaskSource.target("cube.PickPlace", seeds=[5], randomized=True)
    item = source[0]
    assert item.randomization is not None
    with TrainingEnv(source, slots=1, out=tmp_path, backend="cpu") as env:
        group = env.group(0, size=1)
        obs = group.reset()[0]
        names = {t["function"]["name"] for t in obs.tools}
        trace = item.randomization.to_public_trace(item.task.perfect_trace()).decisions()
        assert {c.name for d in trace for c in d.tool_calls} <= names
        assert "pick" not in names or "place" not in names  # public names differ from canonical
        result = _solve(group[0], trace)
        assert result.info["status"] == "success"
        assert group[0].record["randomization"]


def test_suite_items_and_a_failed_trial_become_group_starts(tmp_path):
    spec = tmp_path / "cube.yaml"
    spec.write_text(CUBE_SUITE)
    assert main(["bench", "compile", str(spec), "--out", str(tmp_path / "suite")]) == 0
    suite = load_suite(tmp_path / "suite")
    source = TaskSource.suite(suite, seeds=[0, 1])
    assert len(source) == 2 and source[0].meta["item_id"] == suite.items[0]["item_id"]
    out = tmp_path / "bench"
    # noisy-trace:1.0 errs at every decision: its trials fail
    assert main(["bench", "run", str(tmp_path / "suite"), "--agent", "noisy-trace:1.0", "--trials", "2",
                 "--out", str(out), "--name", "noisy", "--backend", "cpu"]) in (0, 1)
    failures = bench_failure_starts(out, "noisy", suite)
    assert failures[0].start.replay and failures[0].meta["status"] != "success"
    with TrainingEnv(failures, slots=2, out=out, name="train-fails", backend="cpu") as env:
        group = env.group(0, size=2)
        obs = group.reset()
        assert obs[0].digest == obs[1].digest
        # the conversation so far is the trial's, up to the failed decision
        replayed = len(failures[0].start.replay)
        assert sum(m["role"] == "assistant" for m in obs[0].messages) == replayed
        assert group[0].record is None and not group[0].done
        group.close()
        suite_env_items = TaskSource.suite(suite)
        assert suite_env_items[0].task.name == failures[0].task.name
    with pytest.raises(UserError, match="no benchmark run"):
        bench_failure_starts(out, "nope", suite)


def test_a_generation_node_becomes_a_group_start(tmp_path):
    assert main(["gen", "cube.PickPlace", "--agent", "trace", "--branches", "1", "--max-nodes", "3",
                 "--slots", "1", "--out", str(tmp_path), "--name", "g", "--backend", "cpu"]) == 0
    source = generation_starts(tmp_path, "g")
    assert len(source) >= 2
    second = next(i for i in source if i.meta["situation"] != 0)
    with TrainingEnv(source, slots=2, out=tmp_path, name="from-gen", backend="cpu") as env:
        group = env.group(second, size=2)
        a, b = group.reset()
        assert a.digest == b.digest
        place, answer = second.task.perfect_trace().decisions()[1:]
        results = [_solve(r, [place, answer]) for r in group.rollouts]
        assert all(r.info["status"] == "success" for r in results)
        assert group[0].record["rl"]["start"] == f"generation g situation {second.meta['situation']}"
    with pytest.raises(UserError, match="no generation"):
        generation_starts(tmp_path, "missing")
