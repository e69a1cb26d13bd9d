"""The noise floor on synthetic outcomes with known answers: flip rates counted by hand, the
exact McNemar test against scipy's binomial test, the smallest real difference against its
definition, and the compare verdicts inside / outside the floor."""

import itertools

import pytest

from magma_core.bench.metrics import Trial, compute
from magma_core.bench.noise import compare_line, compare_noise, flip_pairs, floor_pairs
from magma_core.bench.report_tables import noise_comparisons
from magma_core.bench.stats import mcnemar_exact_p


def _facts(item_id, condition="clean"):
    return {"item_id": item_id, "condition": condition, "control": None, "track": "in_domain",
            "length_bucket": "short", "lags": [], "stages": 2, "skeleton_id": item_id}


def _trials(outcomes: dict[str, str]) -> list[Trial]:
    """``{"A": "SSFS", ...}``: item A's trials 0..3 succeeded, succeeded, failed, succeeded."""
    return [Trial(_facts(item), k, "success" if v == "S" else "budget_exceeded",
                  2 if v == "S" else 0, 2)
            for item, verdicts in outcomes.items() for k, v in enumerate(verdicts)]


def test_flip_rates_by_hand():
    assert flip_pairs(4, 2) == (4, 6) and flip_pairs(4, 4) == (0, 6) and flip_pairs(1, 1) == (0, 0)
    # A never flips; B: 2 of 4 -> 4 of 6 pairs differ; C: 1 of 4 -> 3 of 6
    noise = compute(_trials({"A": "SSSS", "B": "SFFS", "C": "FFSF"}), 4)["noise"]
    assert noise["flip_rate"] == {"disagreeing": 7, "pairs": 18, "rate": pytest.approx(7 / 18)}
    assert noise["mixed_items"] == {"num": 2, "den": 3}
    assert noise["by_item"]["A"]["flip_rate"] == 0.0
    assert noise["by_item"]["B"]["flip_rate"] == pytest.approx(4 / 6)
    assert noise["by_item"]["C"]["flip_rate"] == pytest.approx(3 / 6)
    # per item at K = 4 no difference can be called real (it takes 6 pairs even without flips)
    assert all(row["floor"] is None for row in noise["by_item"].values())
    assert noise["paired_trials"] == 12
    # one trial per item: nothing to compare, the rate is unknown (not 0)
    single = compute(_trials({"A": "S", "B": "F"}), 1)["noise"]
    assert single["flip_rate"] == {"disagreeing": 0, "pairs": 0, "rate": None}


def test_flip_rate_is_the_chance_two_reruns_disagree():
    """Over every way of ordering an item's verdicts the estimate is the same, and it is the
    fraction of ordered pairs of distinct trials that disagree."""
    for n, c in [(2, 1), (5, 2), (8, 3), (6, 6)]:
        verdicts = [True] * c + [False] * (n - c)
        pairs = list(itertools.combinations(range(n), 2))
        by_hand = sum(verdicts[i] != verdicts[j] for i, j in pairs) / len(pairs)
        d, p = flip_pairs(n, c)
        assert d / p == pytest.approx(by_hand)


def test_exact_mcnemar_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact_p(1, 9) == pytest.approx(2 * 11 / 1024)
    for gained, lost in [(3, 1), (10, 4), (16, 8), (30, 12), (7, 7)]:
        expected = stats.binomtest(gained, gained + lost, 0.5).pvalue
        assert mcnemar_exact_p(gained, lost) == pytest.approx(expected)


def test_smallest_real_difference_is_the_first_that_the_test_calls_real():
    # no flips: 6 pairs all one way is the least (2/2**6 = 0.031; 5 gives 0.0625)
    assert floor_pairs(0, 20) == 6
    assert floor_pairs(0, 5) is None  # 5 paired trials can never show a difference
    for expected, pairs in [(10, 40), (6.67, 20), (30, 200), (3, 12)]:
        m = floor_pairs(expected, pairs)
        lost = int(expected / 2 + 0.5)
        assert m is not None and mcnemar_exact_p(lost + m, lost) < 0.05
        assert all(mcnemar_exact_p(lost + k, lost) >= 0.05 for k in range(1, m))
    assert floor_pairs(10, 40) == 10  # lost 5: 15 vs 5 gives p = 0.041, 14 vs 5 gives 0.064
    # more noise, a higher floor
    assert floor_pairs(0, 100) < floor_pairs(20, 100) < floor_pairs(60, 100)


def _report(outcomes):
    return compute(_trials(outcomes), len(next(iter(outcomes.values()))))


def test_compare_inside_and_outside_the_noise_floor():
    steady = {f"I{i}": "SSSS" for i in range(5)}  # 20 trials, no flip
    better = _report(steady)
    worse = _report({f"I{i}": "FFFF" if i < 2 else "SSSS" for i in range(5)})  # 8 lost, no flip
    c = compare_noise(better, worse)
    assert (c["pairs"], c["gained"], c["lost"]) == (20, 0, 8)
    assert c["difference"] == pytest.approx(-0.4) and c["floor"]["pairs"] == 6
    assert c["verdict"] == "real" and c["p"] == pytest.approx(2 / 256)
    assert "outside the noise floor" in compare_line("better", "worse", c)

    # the same 4-point loss between two noisy runs is inside the floor
    noisy_a = _report({f"I{i}": "SFSF" for i in range(5)})
    noisy_b = _report({f"I{i}": "SFFS" if i == 0 else "SFSF" for i in range(5)})
    c = compare_noise(noisy_a, noisy_b)
    assert (c["gained"], c["lost"]) == (1, 1) and c["flip_rate"] == pytest.approx(4 / 6)
    assert c["verdict"] == "inside" and c["floor"]["pairs"] is None  # 20 pairs at 67% flips: none
    line = compare_line("a", "b", c)
    assert "inside the noise floor" in line and "flip rate of 67%" in line

    noisy_worse = _report({f"I{i}": "FFFF" if i < 2 else "SFSF" for i in range(5)})
    c = compare_noise(noisy_a, noisy_worse)
    assert (c["gained"], c["lost"]) == (0, 4) and c["verdict"] == "inside"

    # over the floor, but churn both ways: not significant
    base = _report({f"I{i}": "SSSSSSSS" if i < 3 else "FFFFFFFF" for i in range(5)})
    mixed = _report({f"I{i}": v for i, v in
                     enumerate(["FFFFFFFF", "SSSSSSSS", "SSSSSSSS", "SSSSSSSS", "SSSSSSSS"])})
    c = compare_noise(base, mixed)
    assert (c["gained"], c["lost"], c["floor"]["pairs"]) == (16, 8, 6)
    assert c["verdict"] == "unclear" and "not significant" in compare_line("a", "b", c)

    # different suites: no pair, no verdict on noise
    c = compare_noise(better, _report({"other": "SSSS"}))
    assert c["verdict"] == "unpaired" and "no paired trial" in compare_line("a", "b", c)


def test_one_trial_per_item_says_the_flip_rate_is_unmeasured():
    a, b = _report({f"I{i}": "S" for i in range(10)}), _report({f"I{i}": "F" for i in range(10)})
    c = noise_comparisons({"a": a, "b": b})["b"]
    assert c["verdict"] == "real" and not c["flip_rate_measured"]
    assert "unmeasured flip rate" in c["message"]


def test_per_item_floor_with_enough_trials():
    from rich.console import Console

    from magma_core.bench.report import print_report

    report = _report({"A": "SSSSSSSS", "B": "SFSFSFSF"})
    by_item = report["noise"]["by_item"]
    assert by_item["A"]["floor"] == pytest.approx(6 / 8)  # no flip: 6 of its 8 trials
    assert by_item["B"]["floor"] is None  # 16 of 28 pairs flip: nothing fits in 8 trials
    console = Console(width=80, record=True, color_system=None)
    print_report({"run": report}, console)
    text = console.export_text()
    assert "floor" in text and "±75" in text and "…" not in text
