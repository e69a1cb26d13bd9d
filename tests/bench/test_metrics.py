"""Metrics against hand-computed values on a small fixed result set; pass^k against its formula."""

import itertools
import random

import pytest

from magma_core.bench.metrics import Trial, compute
from magma_core.bench.prices import Price
from magma_core.bench.stats import pass_hat_k, two_proportion_p, wilson
from magma_core.bench.taxonomy import idle_decisions, terminal_status


def _facts(item_id, condition, control=None, bucket="short", lags=()):
    return {"item_id": item_id, "condition": condition, "control": control, "track": "in_domain",
            "length_bucket": bucket, "lags": list(lags), "stages": 3, "skeleton_id": item_id[0]}


def _trials():
    a, ae = _facts("A.clean", "clean"), _facts("A.err", "execution_error", "A.clean")
    b = _facts("B.clean", "clean", bucket="long")
    bu = _facts("B.upd", "mission_update", "B.clean", bucket="long", lags=[1])
    outcomes = {"A.clean": (a, ["success", "success"]), "A.err": (ae, ["success", "budget_exceeded"]),
                "B.clean": (b, ["success", "non_requested_action"]),
                "B.upd": (bu, ["non_requested_action", "success"])}
    return [Trial(facts, k, status, 3 if status == "success" else 1, 3, 100, 0.5)
            for facts, statuses in outcomes.values() for k, status in enumerate(statuses)]


def test_wilson_known_values():
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_metrics_hand_computed():
    m = compute(_trials(), trials_per_item=2, price_per_mtok=2.0)
    assert (m["success"]["num"], m["success"]["den"]) == (5, 8)
    assert m["success"]["low"] < 0.625 < m["success"]["high"]
    assert (m["success_clean"]["num"], m["success_clean"]["den"]) == (3, 4)
    assert m["success_by_condition"]["execution_error"]["num"] == 1
    # A.err t0 (control S) S, A.err t1 (control S) F, B.upd t0 (control S) F; B.upd t1 excluded
    assert (m["conditional_robustness"]["execution_error"]["num"],
            m["conditional_robustness"]["execution_error"]["den"]) == (1, 2)
    assert (m["conditional_robustness"]["mission_update"]["num"],
            m["conditional_robustness"]["mission_update"]["den"]) == (0, 1)
    assert m["pass_k"]["1"] == pytest.approx((1 + 0.5 + 0.5 + 0.5) / 4)
    assert m["pass_k"]["2"] == pytest.approx(0.25)
    assert m["progression"]["clean"] == pytest.approx((1 + 1 + 1 + 1 / 3) / 4)
    assert m["success_by_length"]["long"]["num"] == 2 and m["success_by_length"]["long"]["den"] == 4
    assert m["mission_update_retention_by_lag"]["1"]["num"] == 1
    assert m["terminal_status_counts"]["execution_error"] == {"success": 1, "budget_exceeded": 1}
    assert m["usage"]["tokens"] == 800
    assert m["usage"]["tokens_per_success"] == pytest.approx(160)
    assert m["usage"]["cost"] == pytest.approx(800 * 2.0 / 1e6)


def test_pass_hat_k_matches_its_definition():
    """pass^k = mean over tasks of P(k trials drawn without replacement all succeed)."""
    rng = random.Random(3)
    for _ in range(30):
        tasks = []
        for _ in range(rng.randint(1, 5)):
            n = rng.randint(1, 6)
            tasks.append([rng.random() < 0.6 for _ in range(n)])
        for k in range(1, 7):
            eligible = [t for t in tasks if len(t) >= k]
            expected = None
            if eligible:
                expected = sum(
                    sum(all(s) for s in itertools.combinations(t, k)) /
                    len(list(itertools.combinations(t, k))) for t in eligible) / len(eligible)
            got = pass_hat_k([(len(t), sum(t)) for t in tasks], k)
            assert got == pytest.approx(expected) if expected is not None else got is None


def test_two_proportion_p():
    assert two_proportion_p((10, 10), (0, 10)) < 0.001
    assert two_proportion_p((5, 10), (5, 10)) == pytest.approx(1.0)


def test_price_table_cost_hand_computed():
    a = {"item_id": "A.clean", "condition": "clean", "control": None, "track": "in_domain",
         "length_bucket": "short", "lags": [], "stages": 3}
    trials = [Trial(a, 0, "success", 3, 3, tokens=1500, prompt_tokens=1000, completion_tokens=500),
              Trial(a, 1, "budget_exceeded", 1, 3, tokens=600, prompt_tokens=0, completion_tokens=0)]
    m = compute(trials, 2, price=Price(3.0, 15.0, "m"))
    # 1000 prompt x 3 + 500 completion x 15, and 600 unsplit tokens at the input price
    assert m["usage"]["cost"] == pytest.approx((1000 * 3 + 500 * 15 + 600 * 3) / 1e6)
    assert m["usage"]["cost_per_success"] == pytest.approx(0.0123)
    assert (m["usage"]["prompt_tokens"], m["usage"]["completion_tokens"]) == (1000, 500)
    assert m["usage"]["price_per_mtok"] is None and m["usage"]["price_model"] == "m"


def _record(*decisions, text_only=False):
    return {"stages": [{"text_only": text_only}],
            "steps": [{"stage_index": 0, "decision": d} for d in decisions]}


def test_no_action_statuses_from_the_idle_decisions():
    call = {"say": "", "tool_calls": [{"name": "pick"}]}
    say = {"say": "I put the cube in zone A.", "tool_calls": []}
    bad = {"say": "", "tool_calls": [], "error": "bad_arguments", "raw": "..."}
    empty = {"say": "  ", "tool_calls": []}
    assert terminal_status("no_action", _record(call, say, say, say)) == "textual_hallucination"
    assert terminal_status("no_action", _record(call, bad, say, bad)) == "textual_hallucination"
    assert terminal_status("no_action", _record(say, call, bad, bad, empty)) == "invalid_format"
    assert idle_decisions(_record(say, call, bad, bad)) == [bad, bad]
    assert terminal_status("no_action", _record(say, text_only=True)) == "non_physical_exceeded"
    assert terminal_status("no_action") == "non_physical_exceeded"
    assert terminal_status("failed", _record(say)) == "non_requested_action"
    assert terminal_status("something new") == "env_failure"
