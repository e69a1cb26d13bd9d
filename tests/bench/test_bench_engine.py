"""A benchmark run keeps one engine per process and feeds items x trials through its slots
(the runs front door's procedural loop), in this process or in worker processes. Real
simulator."""

import pytest

import magma_core.runs.assembly as assembly
from magma_core.bench.report import bench_report
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite
from magma_core.store.bench_store import bench_run_name, open_bench_store

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]

SUBSET = """name: sorting-mini
conditions: [clean, execution_error, interruption, mission_update, combined]
condition_options: {at: 0, lag: 0}
skeletons:
  - {definition: sorting.LongSorting, seeds: 1, length_bucket: mid}
"""


@pytest.fixture(scope="module")
def mini_suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mini")
    (folder / "spec.yaml").write_text(SUBSET)
    compile_suite(folder / "spec.yaml", folder / "suite")
    return folder / "suite"


def test_one_engine_runs_every_item_side_by_side(mini_suite, tmp_path, monkeypatch):
    opened = []
    real = assembly.open_executor

    def counting(task, slots, *args, **kwargs):
        opened.append(slots)
        return real(task, slots, *args, **kwargs)

    monkeypatch.setattr(assembly, "open_executor", counting)
    trials = []
    result = run_bench(BenchSpec(mini_suite, agent="trace", trials=2, slots=3, out=tmp_path, name="one"),
                       lambda event, payload: trials.append(payload) if event == "trial" else None)
    assert opened == [3]  # one engine, 3 slots, for 5 items x 2 trials
    assert result.ran == 10 and not result.given_up
    assert all(t["status"] == "success" for t in trials)
    with open_bench_store(tmp_path) as store:
        episodes = store.episodes(bench_run_name("one"))
        assert [e.episode for e in episodes] == list(range(10))
        # trial k of every item uses seed + k: an item and its control start alike
        assert [e.seed for e in episodes] == [0, 1] * 5
        names = {store.episode_record(bench_run_name("one"), e.episode)["task"] for e in episodes}
    assert len(names) == 5 and all(n.startswith("sorting.LongSorting-c12-s") for n in names)
    report = bench_report(tmp_path, ["one"])["one"]
    assert (report["success"]["num"], report["success"]["den"]) == (10, 10)
    assert report["success_by_length"]["mid"]["den"] == 10


def test_workers_share_the_trials_without_loss_or_duplicates(mini_suite, tmp_path):
    result = run_bench(BenchSpec(mini_suite, agent="trace", trials=2, slots=2, workers=2,
                                 out=tmp_path, name="two"))
    assert result.ran == 10 and not result.given_up and not result.failures
    with open_bench_store(tmp_path) as store:
        episodes = store.episodes(bench_run_name("two"))
    assert sorted(e.episode for e in episodes) == list(range(10))
    assert all(e.status == "success" for e in episodes)
    again = run_bench(BenchSpec(mini_suite, agent="trace", trials=2, slots=2, workers=2,
                                out=tmp_path, name="two"))
    assert again.ran == 0 and again.resumed == 10
