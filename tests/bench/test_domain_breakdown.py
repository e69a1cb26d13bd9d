"""The report broken down by domain (an item's scenario) and condition: hand-computed values,
the rich tables, the HTML page, and a mixed-domain suite compiled with each scenario's
transforms."""

from __future__ import annotations

import io
import json

import yaml
from rich.console import Console

from magma_core.bench.metrics import Trial, compute, domain
from magma_core.bench.report import print_report
from magma_core.bench.report_html import render
from magma_core.bench.suite import build_items


def _facts(item_id, scenario, condition, control=None):
    return {"item_id": item_id, "scenario": scenario, "condition": condition, "control": control,
            "track": "in_domain", "length_bucket": "mid", "lags": [], "stages": 2,
            "skeleton_id": item_id.rsplit(".", 1)[0]}


def _trials():
    wc = _facts("w.clean", "warehouse.Swap", "clean")
    we = _facts("w.err", "warehouse.Swap", "execution_error", "w.clean")
    bc = _facts("b.clean", "buttons.PanelTasks", "clean")
    be = _facts("b.err", "buttons.PanelTasks", "execution_error", "b.clean")
    outcomes = {"w.clean": (wc, ["success", "success"]), "w.err": (we, ["success", "budget_exceeded"]),
                "b.clean": (bc, ["budget_exceeded", "success"]), "b.err": (be, ["success", "success"])}
    return [Trial(f, k, status, 2 if status == "success" else 0, 2)
            for f, statuses in outcomes.values() for k, status in enumerate(statuses)]


def test_domain_is_the_scenario_or_the_skeleton_prefix():
    assert domain({"scenario": "warehouse.Swap", "skeleton_id": "x"}) == "warehouse"
    assert domain({"skeleton_id": "sorting.LongSorting-c12-s3"}) == "sorting"  # older runs


def test_metrics_by_domain_and_condition_hand_computed():
    m = compute(_trials(), trials_per_item=2)
    assert {k: (r["num"], r["den"]) for k, r in m["success_by_domain"].items()} == \
        {"buttons": (3, 4), "warehouse": (3, 4)}
    per = m["success_by_domain_condition"]
    assert (per["warehouse"]["execution_error"]["num"], per["warehouse"]["execution_error"]["den"]) == (1, 2)
    assert (per["buttons"]["clean"]["num"], per["buttons"]["clean"]["den"]) == (1, 2)
    robust = m["conditional_robustness_by_domain"]
    # warehouse: both controls succeeded, 1 of 2 perturbed; buttons: only trial 1's control did
    assert (robust["warehouse"]["execution_error"]["num"], robust["warehouse"]["execution_error"]["den"]) == (1, 2)
    assert (robust["buttons"]["execution_error"]["num"], robust["buttons"]["execution_error"]["den"]) == (1, 1)
    assert "clean" not in robust["buttons"]


def test_the_tables_and_the_page_show_the_breakdown():
    reports = {"a": compute(_trials(), 2) | {"agent": {"spec": "trace", "model": None}}}
    out = io.StringIO()
    print_report(reports, Console(file=out, width=120))
    text = out.getvalue()
    assert "Success by domain and condition" in text and "Conditional robustness by domain" in text
    assert "warehouse / execution_error" in text and "50.0% 1/2" in text
    page = render(reports, {})
    assert "Success by domain and condition" in page and "buttons / clean" in page


def test_a_mixed_suite_takes_each_scenarios_transforms():
    spec = yaml.safe_load("""
conditions: [clean, execution_error]
skeletons:
  - {preset: sorting.SortAll}
  - {preset: warehouse.Swap}
  - {definition: buttons.PanelTasks, seeds: 1}
""")
    items = build_items(spec)
    assert sorted({i["scenario"].split(".")[0] for i in items}) == ["buttons", "sorting", "warehouse"]
    errors = {i["scenario"].split(".")[0]: json.dumps(i["task"]["stages"]) for i in items
              if i["condition"] == "execution_error"}
    assert "GraspSlip" in errors["sorting"] and "Jam" in errors["warehouse"]
    assert "StuckButton" in errors["buttons"]
