"""The data-value experiment's held-out suite: 20 frozen ShortSorting items from seeds 1000+,
none of them a seed the experiment trains on (``benchmarks/data_value.py`` generates from seed
0 and refuses to reach 1000). No simulator."""

import sys
from pathlib import Path

import pytest

from magma_core.bench.suite import compile_suite, load_suite
from magma_scenarios.sorting.definitions import ShortSorting

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import data_value  # noqa: E402


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite") / "short"
    compile_suite("short_heldout", out)
    return load_suite(out)


def test_twenty_clean_short_items_from_seed_1000(suite):
    assert len(suite.items) == 20
    seeds = [item["task"]["seed"] for item in suite.items]
    assert len(set(seeds)) == 20 and min(seeds) >= data_value.HELD_OUT_FIRST_SEED
    for item in suite.items:
        assert item["condition"] == "clean" and item["length_bucket"] == "short"
        assert item["task"]["definition"] == "magma_scenarios.sorting.definitions:ShortSorting"
        calls = [c["name"] for e in item["task"]["perfect_trace"]["events"] if e["type"] == "tool_calls"
                 for c in e["calls"]]
        assert calls == ["pick", "place"]


def test_the_training_seeds_never_meet_the_held_out_ones(suite, monkeypatch, tmp_path):
    held_out = {item["task"]["seed"] for item in suite.items}
    trained = set(range(48))  # the experiment's default --trees, seeds from 0
    assert not held_out & trained
    monkeypatch.setattr(sys, "argv", ["data_value.py", "--phases", "data", "--trees", "1001",
                                      "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="held-out seeds"):
        data_value.main()


def test_short_sorting_generates_one_request_per_task():
    tasks = [ShortSorting().generate(seed) for seed in range(5)]
    assert all(len(t.stages) == 2 and len(t.requests) == 1 for t in tasks)
    assert len({t.requests[0].description for t in tasks}) > 1  # the seed picks the cube and zone
