"""The shipped suites of the warehouse and the button panel: compiled through the CLI by
name, every perturbed item paired with its clean control, traces valid; a one-skeleton
warehouse suite run by the trace agent on the simulator (every item succeeds) and reported
by domain."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from magma_core.bench.conditions import DEFAULT_CONDITIONS as CONDITIONS
from magma_core.bench.report import bench_report
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite, load_suite
from magma_core.cli import main
from magma_scenarios.warehouse import bench_conditions, plans


@pytest.mark.parametrize("name, items", [("warehouse", 45), ("buttons", 40)])
def test_the_shipped_suite_compiles_by_name_and_pairs_every_item(name, items, tmp_path, capsys):
    out = tmp_path / name
    assert main(["bench", "compile", name, "--out", str(out)]) == 0
    assert f"suite {name}: {items} items" in capsys.readouterr().out
    suite = load_suite(out)
    assert Counter(i["condition"] for i in suite.items) == {c: items // 5 for c in CONDITIONS}
    by_id = {i["item_id"]: i for i in suite.items}
    for item in suite.items:
        assert item["scenario"].startswith(f"{name}.")
        control = item["metadata"]["control_episode_id"]
        if item["condition"] != "clean":
            assert by_id[control]["condition"] == "clean"
            assert by_id[control]["skeleton_id"] == item["skeleton_id"]
        if name == "warehouse":
            plans.replay(bench_conditions._calls(item["task"]["perfect_trace"]["events"]))


@pytest.mark.sim
def test_the_trace_agent_succeeds_on_every_condition(tmp_path):
    spec = tmp_path / "swap.yaml"
    spec.write_text("name: swap\nskeletons:\n  - {preset: warehouse.Swap}\n")
    compile_suite(spec, tmp_path / "suite")
    out = tmp_path / "runs"
    run_bench(BenchSpec(tmp_path / "suite", agent="trace", trials=1, slots=1, out=out, name="t"))
    report = bench_report(out, ["t"])["t"]
    assert report["success"]["num"] == report["success"]["den"] == 5
    assert set(report["success_by_domain_condition"]["warehouse"]) == set(CONDITIONS)
    assert json.dumps(report["success_by_domain"]) == json.dumps({"warehouse": report["success"]})
