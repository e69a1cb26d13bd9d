"""The built-in sorting suite: 100+ frozen LongSorting items across length buckets, each
perturbed item paired with its clean control; one task format (``magma.task/1``) for presets
and generated tasks. No simulator."""

import json
import time
from collections import Counter

import pytest

import magma_core.simulation.tasks.generator as generator
from magma_core.bench.suite import compile_suite, load_suite
from magma_core.bench.task_spec import task_from_spec, task_to_spec
from magma_core.cli import main
from magma_core.scenarios import load_preset
from magma_core.simulation.tasks import task_to_json
from magma_core.simulation.tasks.generated import SPEC_FORMAT
from magma_scenarios.sorting.bench_conditions import _fits
from magma_scenarios.sorting.definitions import LongSorting


@pytest.fixture(scope="module")
def sorting(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite") / "sorting"
    started = time.perf_counter()
    compile_suite("sorting", out)
    return load_suite(out), time.perf_counter() - started


def test_sorting_suite_has_100_items_across_length_buckets(sorting):
    suite, seconds = sorting
    assert len(suite.items) >= 100
    clean = [i for i in suite.items if i["condition"] == "clean"]
    assert Counter(i["length_bucket"] for i in clean) == {"mid": 7, "long": 7, "very-long": 7}
    assert Counter(i["condition"] for i in suite.items) == {
        c: 21 for c in ("clean", "execution_error", "interruption", "mission_update", "combined")}
    for item in clean:  # the bucket is the clean task's oracle tool calls
        calls = item["metadata"]["clean_oracle_tool_calls"]
        low, high = {"mid": (7, 12), "long": (13, 24), "very-long": (25, 48)}[item["length_bucket"]]
        assert low <= calls <= high
        assert item["task"]["definition"] == "magma_scenarios.sorting.definitions:LongSorting"
    assert seconds < 60  # compile stays quick (a few seconds on an idle machine)


def test_every_perturbed_item_is_paired_and_consistent(sorting):
    suite, _ = sorting
    by_id = {i["item_id"]: i for i in suite.items}
    for item in suite.items:
        control = item["metadata"]["control_episode_id"]
        if item["condition"] == "clean":
            assert control is None and item["interventions"] == []
            continue
        paired = by_id[control]
        assert paired["condition"] == "clean" and paired["skeleton_id"] == item["skeleton_id"]
        assert paired["length_bucket"] == item["length_bucket"]
        kinds = {i["type"] for i in item["interventions"]}
        assert kinds >= ({"mission_update", "execution_error"} if item["condition"] == "combined"
                         else {item["condition"]})
        # the perturbed reference trace still respects zone capacity and moves every cube
        assert _fits(item["task"]["perfect_trace"]["events"])
    updates = [i for i in suite.items if i["condition"] == "mission_update"]
    assert all(i["metadata"]["intervention_lags"] == [0] for i in updates)


def test_items_are_frozen_tasks_that_load_without_the_generator(sorting, monkeypatch):
    suite, _ = sorting

    def broken(*args, **kwargs):
        raise AssertionError("a frozen suite must not call the generator")

    monkeypatch.setattr(generator, "generate_task", broken)
    for item in suite.items:
        task = task_from_spec(item["task"])
        assert item["task"]["format"] == SPEC_FORMAT
        assert task_to_json(task) == json.dumps(item["task"], sort_keys=True, indent=2, ensure_ascii=True)
        assert task.name == item["item_id"] and task.perfect_trace() is not None


def test_compile_is_deterministic_and_the_cli_prints_the_count(sorting, tmp_path, capsys):
    suite, _ = sorting
    assert main(["bench", "compile", "sorting", "--out", str(tmp_path / "again")]) == 0
    printed = capsys.readouterr().out
    assert f"suite sorting: {len(suite.items)} items" in printed
    assert load_suite(tmp_path / "again").fingerprint == suite.fingerprint


def test_presets_and_generated_tasks_share_one_format():
    preset = task_to_spec(load_preset("sorting.SortAll")())
    generated = task_to_spec(LongSorting().generate(3))
    assert preset["format"] == generated["format"] == SPEC_FORMAT
    assert set(preset) == set(generated)
    assert preset["definition"] is None and preset["requests"] == []
    again = task_from_spec(preset)
    assert [type(s).__name__ for s in again.stages] == ["ObjectsToZones"] * 3
    assert again.perfect_trace().to_dict() == preset["perfect_trace"]


def test_mission_update_changes_goal_and_trace_of_work_in_progress(sorting):
    suite, _ = sorting
    item = next(i for i in suite.items if i["condition"] == "mission_update")
    clean = next(i for i in suite.items if i["item_id"] == item["metadata"]["control_episode_id"])
    update = item["interventions"][0]
    stage = item["task"]["stages"][update["relevant_at_stage"]]
    before = clean["task"]["stages"][update["relevant_at_stage"]]
    assert before["spec"]["arguments"]["instruction"] is None  # work in progress
    text = stage["spec"]["arguments"]["instruction"]
    assert text.startswith("Change of plan: put the ")
    obj, new = text.removeprefix("Change of plan: put the ").split(" instead")[0].split(" in ")
    assert stage["spec"]["arguments"]["placements"] == {obj: new}
    places = [e["calls"][0]["arguments"]["area"] for e in item["task"]["perfect_trace"]["events"]
              if e["type"] == "tool_calls" and e["calls"][0]["name"] == "place"]
    clean_places = [e["calls"][0]["arguments"]["area"] for e in clean["task"]["perfect_trace"]["events"]
                    if e["type"] == "tool_calls" and e["calls"][0]["name"] == "place"]
    assert sum(a != b for a, b in zip(places, clean_places, strict=True)) == 1 and new in places
