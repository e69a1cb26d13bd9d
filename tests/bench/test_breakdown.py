"""The per-item, per-stage and per-failure-reason tables against hand-computed values, and the
taxonomy naming exhausted traces as such (they were reported as ``invalid_format``)."""

from rich.console import Console

from magma_core.bench.metrics import Trial, compute
from magma_core.bench.report import print_report
from magma_core.bench.taxonomy import TAXONOMY, terminal_status


def _facts(item_id, stages=3):
    return {"item_id": item_id, "condition": "clean", "control": None, "track": "in_domain",
            "length_bucket": "short", "lags": [], "stages": stages, "skeleton_id": "sk"}


def _trials():
    a, b = _facts("A"), _facts("B", stages=2)
    return [
        Trial(a, 0, "success", 3, 3, engine_status="success"),
        Trial(a, 1, "budget_exceeded", 1, 3, engine_status="exceeded",
              reason="Stage 1 reached its maximum of 4 tool calls"),
        Trial(a, 2, "trace_exhausted", 2, 3, engine_status="trace_exhausted",
              reason="the reference trace ran out before the task ended"),
        Trial(b, 0, "budget_exceeded", 0, 2, engine_status="decision_cap",
              reason="reached the cap of 60 decisions"),
        Trial(b, 2, "infrastructure_failure", 0, 2, reason="lost 3 times to an agent or judge outage"),
    ]


def test_per_item_table():
    items = compute(_trials(), 3)["by_item"]
    assert list(items) == ["A", "B"]
    assert items["A"]["verdicts"] == [True, False, False]
    assert items["B"]["verdicts"] == [False, None, False]  # trial 1 not stored
    assert (items["A"]["success"]["num"], items["A"]["success"]["den"]) == (1, 3)
    assert items["A"]["progression"] == (1 + 1 / 3 + 2 / 3) / 3
    assert items["A"]["statuses"] == {"budget_exceeded": 1, "success": 1, "trace_exhausted": 1}
    assert items["B"]["stages"] == 2 and items["B"]["condition"] == "clean"


def test_per_stage_funnel():
    stages = compute(_trials(), 3)["by_stage"]
    assert list(stages) == ["0", "1", "2"]  # the outage trial ran nothing and is left out
    # stage 0: A0, A1, A2, B0 reached it; B0 failed there
    assert stages["0"]["reached"] == 4 and stages["0"]["passed"]["num"] == 3
    assert stages["0"]["ended_here"] == {"budget_exceeded": 1}
    # stage 1: A0, A1, A2; A1 ended there
    assert stages["1"]["reached"] == 3 and stages["1"]["passed"]["num"] == 2
    assert stages["1"]["ended_here"] == {"budget_exceeded": 1}
    # stage 2: A0 and A2 (B has 2 stages); the trace ran out there
    assert stages["2"]["reached"] == 2 and stages["2"]["passed"]["num"] == 1
    assert stages["2"]["ended_here"] == {"trace_exhausted": 1}


def test_per_failure_reason_table():
    reasons = compute(_trials(), 3)["failure_reasons"]
    assert list(reasons) == ["budget_exceeded", "infrastructure_failure", "trace_exhausted"]
    budget = reasons["budget_exceeded"]
    assert budget["trials"] == 2 and budget["share"] == 0.5 and budget["items"] == ["A", "B"]
    assert budget["at_stage"] == {"0": 1, "1": 1}
    assert budget["engine_statuses"] == {"decision_cap": 1, "exceeded": 1}
    assert budget["example"] == "Stage 1 reached its maximum of 4 tool calls"
    assert reasons["trace_exhausted"]["at_stage"] == {"2": 1}
    assert reasons["infrastructure_failure"]["at_stage"] == {}  # it never ran a stage
    assert "success" not in reasons


def test_exhausted_traces_are_named_as_such():
    assert "trace_exhausted" in TAXONOMY
    assert terminal_status("trace_exhausted") == "trace_exhausted"
    exhausted = {"say": "", "tool_calls": [],
                 "error": "the agent gave no decision (trace_exhausted): the trace has 7 decisions"}
    malformed = {"say": "", "tool_calls": [], "error": "bad_arguments"}
    record = {"stages": [{"text_only": False}],
              "steps": [{"stage_index": 0, "decision": d} for d in (exhausted, exhausted, exhausted)]}
    assert terminal_status("no_action", record) == "trace_exhausted"
    record["steps"][1]["decision"] = malformed
    assert terminal_status("no_action", record) == "invalid_format"


def test_the_printed_tables_fit_80_columns():
    console = Console(width=80, record=True, color_system=None)
    print_report({"run": compute(_trials(), 3)}, console)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    for title in ("Items: run", "Stages: run", "Failure reasons: run", "Noise floor"):
        assert title in text
    assert "trace_exhausted, e.g.: the reference trace ran out" in text
