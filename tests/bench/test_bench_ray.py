"""``magma bench run --ray``: a benchmark's trials in engine actors on a local Ray cluster
(2 CPUs), the driver alone writing the store: the same trials as without Ray."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'magma[ray]')")

from magma_core.bench.report import bench_report  # noqa: E402
from magma_core.bench.runner import BenchSpec, run_bench  # noqa: E402
from magma_core.bench.suite import compile_suite  # noqa: E402
from magma_core.cli import main  # noqa: E402
from magma_core.runs.ray_cluster import RayCluster, connect, disconnect  # noqa: E402
from magma_core.store.bench_store import bench_run_name, open_bench_store  # noqa: E402

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster of 2 CPUs for the module; the benchmark joins it."""
    connected = connect(RayCluster(num_cpus=2))
    yield
    if connected:
        disconnect()


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite") / "smoke"
    compile_suite("smoke", out)
    return out


def _trials(out, name: str) -> list[tuple]:
    """Each stored trial's row and record, without what depends on timing or on which slot
    ran it."""
    with open_bench_store(out, create=False) as store:
        run = bench_run_name(name)
        rows = []
        for s in store.episodes(run):
            record = store.episode_record(run, s.episode)
            for key in ("timings", "slot"):
                record.pop(key, None)
            for key in ("latency_s", "per_decision"):
                record["agent"].pop(key, None)
            for step in record["steps"]:
                step.pop("timings", None)
            rows.append((s.episode, s.seed, s.status, s.stages_passed, s.optimal, s.tool_calls,
                         s.decisions, record))
        return rows


def test_bench_run_on_ray_stores_the_same_trials_as_without_ray(suite_dir, tmp_path, capsys):
    plain = run_bench(BenchSpec(suite_dir, agent="trace", trials=2, slots=2,
                                out=tmp_path / "plain", name="b"))
    assert plain.ran == 10 and not plain.given_up
    code = main(["bench", "run", str(suite_dir), "--trials", "2", "--slots", "2", "--ray",
                 "--workers", "2", "--out", str(tmp_path / "ray"), "--name", "b"])
    assert code == 0
    assert "bench run b: 10 trials run, 0 resumed, 0 items given up" in capsys.readouterr().out
    assert _trials(tmp_path / "ray", "b") == _trials(tmp_path / "plain", "b")
    on_ray = bench_report(tmp_path / "ray", ["b"])["b"]
    assert (on_ray["success"]["num"], on_ray["success"]["den"]) == (10, 10)
    # the same command again resumes: nothing left to run
    assert main(["bench", "run", str(suite_dir), "--trials", "2", "--slots", "2", "--ray",
                 "--out", str(tmp_path / "ray"), "--name", "b"]) == 0
    assert "0 trials run, 10 resumed" in capsys.readouterr().out
