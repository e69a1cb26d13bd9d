"""The noise floor and the breakdown tables from real stored trials: the smoke suite run on the
real simulator by the trace agent and twice by the noisy-trace agent (two seeds: identical
agents, different draws), read back through ``magma bench report`` and checked against what
the store itself holds."""

import json
from collections import Counter

import pytest

from magma_core.bench.report import bench_report
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite
from magma_core.cli import main
from magma_core.store import RunStore
from magma_core.store.bench_store import bench_run_name, open_bench_store, trial_of

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]
K = 4


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("noise")
    suite = compile_suite("smoke", folder / "suite").parent
    run_bench(BenchSpec(suite, agent="trace", trials=K, slots=2, out=folder, name="trace"))
    run_bench(BenchSpec(suite, agent="noisy-trace:0.3", trials=K, slots=2, out=folder, name="noisy"))
    run_bench(BenchSpec(suite, agent="noisy-trace:0.3", trials=K, slots=2, seed=K, out=folder,
                        name="noisy2"))
    return folder


def _stored(out, name):
    """item_id -> [(trial, engine status, stages passed, stages total)] straight from the store."""
    with open_bench_store(out, create=False) as store:
        items = store.get_bench(name)["config"]["items"]
    with RunStore(out / "magma.db") as store:
        summaries = store.episodes(bench_run_name(name))
    rows: dict[str, list] = {}
    for s in summaries:
        position, k = trial_of(s.episode, K)
        rows.setdefault(items[position]["item_id"], []).append((k, s.status, s.stages_passed, s.stages_total))
    return rows


def test_flip_rates_are_those_of_the_stored_trials(out):
    report = bench_report(out, ["noisy"])["noisy"]
    stored = _stored(out, "noisy")
    assert sum(len(v) for v in stored.values()) == 5 * K
    disagreeing = pairs = 0
    for item_id, trials in stored.items():
        verdicts = [status == "success" for _, status, _, _ in sorted(trials)]
        d = sum(a != b for i, a in enumerate(verdicts) for b in verdicts[i + 1:])
        p = len(verdicts) * (len(verdicts) - 1) // 2
        disagreeing, pairs = disagreeing + d, pairs + p
        assert report["noise"]["by_item"][item_id]["flip_rate"] == pytest.approx(d / p)
        assert report["by_item"][item_id]["verdicts"] == verdicts
    assert report["noise"]["flip_rate"]["disagreeing"] == disagreeing and pairs == 30
    assert 0 < disagreeing < pairs  # the noisy agent really flips, and not always
    trace = bench_report(out, ["trace"])["trace"]["noise"]
    assert trace["flip_rate"] == {"disagreeing": 0, "pairs": 30, "rate": 0.0}
    assert trace["floor"]["pairs"] == 6 and trace["floor"]["difference"] == pytest.approx(6 / 20)


def test_failure_reasons_and_stages_are_the_stored_episodes(out):
    report = bench_report(out, ["noisy"])["noisy"]
    stored = [t for trials in _stored(out, "noisy").values() for t in trials]
    engine = Counter(status for _, status, _, _ in stored if status != "success")
    assert "trace_exhausted" in engine, "this seed's noisy run has exhausted traces"
    reasons = report["failure_reasons"]
    # exhausted traces are named as such, not as unparseable replies
    assert reasons["trace_exhausted"]["engine_statuses"] == {"trace_exhausted": engine["trace_exhausted"]}
    assert "invalid_format" not in reasons
    assert "ran out" in reasons["trace_exhausted"]["example"]
    assert sum(r["trials"] for r in reasons.values()) == sum(engine.values())
    assert sum(n for r in reasons.values() for n in r["engine_statuses"].values()) == sum(engine.values())
    for s, row in report["by_stage"].items():
        index = int(s)
        reached = [t for t in stored if t[3] > index and t[2] >= index]
        assert row["reached"] == len(reached)
        assert row["passed"]["num"] == sum(1 for t in reached if t[2] > index)
        assert sum(row["ended_here"].values()) == sum(
            1 for t in reached if t[1] != "success" and min(t[2], t[3] - 1) == index)


def test_compare_says_whether_a_difference_is_inside_the_noise_floor(out, capsys, tmp_path):
    assert main(["bench", "report", "trace", "--compare", "noisy", "noisy2", "--out", str(out),
                 "--json", str(tmp_path / "r.json")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    payload = json.loads((tmp_path / "r.json").read_text())
    floor = payload["noise_floor"]
    noisy, noisy2 = floor["noisy"], floor["noisy2"]
    assert noisy["pairs"] == noisy2["pairs"] == 5 * K
    for comparison in (noisy, noisy2):
        assert " ".join(comparison["message"].split()) in text
    # the trace agent against a noisy one: a real difference, well over the floor
    report = payload["runs"]
    assert noisy["lost"] == report["trace"]["success"]["num"] - report["noisy"]["success"]["num"]
    assert noisy["verdict"] == "real" and "outside the noise floor" in noisy["message"]
    # the noisy agent with another seed: the same agent, so its difference is inside the floor
    assert main(["bench", "report", "noisy", "--compare", "noisy2", "--out", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "noisy2 vs noisy:" in text and "inside the noise floor" in text
    assert "Noise floor" in text and "Failure reasons: noisy" in text and "trace exhausted" in text
