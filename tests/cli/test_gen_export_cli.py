"""``magma gen`` / ``magma export`` as commands: runs export too, bad input is one line."""

from __future__ import annotations

import json

import pytest

from cli.conftest import magma


@pytest.mark.sim
def test_a_run_exports_as_chat_rows(workdir):
    done = magma("run", "cube.PickPlace", "--agent", "trace", "--episodes", "2", "--out", "st",
                 "--name", "r", cwd=workdir)
    assert done.returncode == 0, done.stderr
    deduplicated = magma("export", "r", "--out", "st", "--output", "ex1", cwd=workdir)
    assert deduplicated.returncode == 0, deduplicated.stderr
    assert "train 1, validation 0" in deduplicated.stdout  # the 2 trace episodes say the same
    assert "dropped 1 duplicate conversation(s)" in deduplicated.stderr
    out = magma("export", "r", "--out", "st", "--output", "ex", "--validation-ratio", "0.5",
                "--keep-duplicates", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert "train 1, validation 1" in out.stdout
    row = json.loads((workdir / "ex" / "chat_train.jsonl").read_text().splitlines()[0])
    roles = [m["role"] for m in row["messages"]]
    assert roles[:3] == ["system", "user", "assistant"] and roles[-1] == "assistant"
    assert row["messages"][-1]["content"]  # the completion answer
    assert sorted(t["function"]["name"] for t in row["tools"])


@pytest.mark.sim
def test_a_run_of_a_definition_exports_each_episodes_own_task(workdir):
    """A definition is no preset: the export regenerates each episode's task from its seed
    (they differ), and each row's tools and attributes are that task's."""
    from magma_core.scenarios import load_definition

    done = magma("run", "sorting.LongSorting", "--agent", "trace", "--episodes", "2", "--out", "st",
                 "--name", "d", cwd=workdir)
    assert done.returncode == 0, done.stderr
    out = magma("export", "d", "--out", "st", "--output", "ex", cwd=workdir)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for split in ("train", "validation")
            for line in (workdir / "ex" / f"chat_{split}.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    definition = load_definition("sorting.LongSorting")()
    for row in rows:
        seed = int(row["id"].split(":e")[1].split(":")[0])  # episode k ran seed k
        task = definition.generate(seed)
        assert {t["function"]["name"] for t in row["tools"]} == {
            t["name"] for t in task.Tools_cls.get_api_description()}
        objects = task.situation_init.attributes["objects"]
        assert all(name in row["messages"][0]["content"] for name in objects)


def test_bad_input_is_one_line(workdir):
    for args in (["export", "nope", "--out", "st"], ["export", "x", "--format", "csv"],
                 ["gen", "cube.PickPlace", "--branches", "0"], ["gen", "cube.Nope"],
                 ["gen", "cube.PickPlace", "--agent", "noisy-trace:7"],
                 ["gen", "buttons.Sequence", "--randomized"],  # no randomization config
                 ["gen", "sorting.LongSortingJudged"],  # judged stages, no --judge
                 ["gen", "cube.PickPlace", "--temperature", "0.5"],  # a model option, no model
                 ["gen", "cube.PickPlace", "--concurrency", "0"]):
        done = magma(*args, cwd=workdir)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
