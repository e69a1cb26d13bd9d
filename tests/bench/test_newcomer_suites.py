"""A newcomer's suites: a scenario without condition transforms compiles clean-only (and
paraphrase) suites; suite names resolve as names first, paths only when they look like
paths, and an ambiguous or unknown name is one line that says what to type."""

from __future__ import annotations

import os

import pytest

from magma_core.bench.suite import compile_suite, load_suite, looks_like_path, resolve_spec
from magma_core.scenarios.registry import find_suite
from magma_core.user_error import UserError


def _spec(tmp_path, conditions: str):
    path = tmp_path / "cube_suite.yaml"
    path.write_text(f"name: cube_clean\nconditions: {conditions}\n"
                    "skeletons:\n  - {preset: cube.PickPlace}\n")
    return path


def test_a_clean_only_suite_compiles_for_a_scenario_without_transforms(tmp_path):
    """cube declares no transforms module: clean needs none (it refused before)."""
    manifest = compile_suite(_spec(tmp_path, "[clean]"), tmp_path / "out")
    suite = load_suite(manifest.parent)
    assert [i["condition"] for i in suite.items] == ["clean"]


def test_a_condition_that_needs_transforms_says_so_and_where_to_read(tmp_path):
    with pytest.raises(UserError, match=r"needed by the conditions execution_error.*Conditions of your own"):
        compile_suite(_spec(tmp_path, "[clean, execution_error]"), tmp_path / "out")


@pytest.mark.parametrize(("text", "path"), [("smoke", False), ("pantry", False), ("./pantry", True),
                                             ("suites/x.yaml", True), ("x.yml", True), ("~/s.yaml", True)])
def test_what_looks_like_a_path(text, path):
    assert looks_like_path(text) is path


def test_a_name_wins_over_a_folder_of_that_name_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke").mkdir()  # a folder named like the suite (it failed "Is a directory")
    assert resolve_spec("smoke") == find_suite("smoke")


def test_an_unknown_name_with_a_folder_or_file_here_says_how_to_name_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pantry").mkdir()
    with pytest.raises(UserError) as folder:
        resolve_spec("pantry")
    message = str(folder.value)
    assert "'pantry' is read as a suite name" in message and "smoke" in message
    assert "./pantry here is a folder" in message and os.linesep not in message
    (tmp_path / "mine").write_text("skeletons: []\n")
    with pytest.raises(UserError, match=r"give it as a path: \./mine"):
        resolve_spec("mine")
    with pytest.raises(UserError, match="is a folder: give the spec YAML"):
        compile_suite("./pantry", tmp_path / "out")


def test_a_suite_item_sets_a_scorer_per_stage_and_then_needs_no_judge(tmp_path):
    from magma_core.bench.task_spec import task_from_spec
    from magma_core.simulation.executor.task_check import stages_to_run
    from magma_core.simulation.stage.scorers import Contains

    spec = tmp_path / "q.yaml"
    spec.write_text("name: q\nconditions: [clean]\nskeletons:\n"
                    "  - {preset: sorting.Question, scorers: {1: {contains: zone_a}}}\n")
    (item,) = load_suite(compile_suite(spec, tmp_path / "out").parent).items
    assert item["task"]["stages"][1]["scorer"] == Contains("zone_a").to_spec()
    task = task_from_spec(item["task"])
    assert task.stages[1].scorer == Contains("zone_a") and stages_to_run(task, judge=None)
    for bad, why in (("{0: {contains: x}}", "needs a text-only stage"), ("{7: {exact: x}}", "not a stage index"),
                     ("{1: {regex: '(a+)+'}}", "exponential")):
        spec.write_text(f"conditions: [clean]\nskeletons:\n  - {{preset: sorting.Question, scorers: {bad}}}\n")
        with pytest.raises(UserError, match=why):
            compile_suite(spec, tmp_path / f"bad{len(why)}")
