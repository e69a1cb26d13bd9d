"""compile + run + report end to end on the smoke suite, on the real simulator."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from magma_core.bench.report import bench_report, write_html, write_json
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite, load_suite
from magma_core.cli import main
from magma_core.user_error import UserError

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite") / "smoke"
    compile_suite("smoke", out)
    return out


def test_compiled_smoke_suite_pairs_every_perturbed_item_with_its_control(suite_dir):
    suite = load_suite(suite_dir)
    conditions = {i["condition"]: i for i in suite.items}
    assert set(conditions) == {"clean", "execution_error", "interruption", "mission_update", "combined"}
    clean = conditions["clean"]
    for item in suite.items:
        meta = item["metadata"]
        assert meta["control_episode_id"] == (None if item is clean else clean["item_id"])
        assert meta["clean_oracle_tool_calls"] == 6
    assert conditions["interruption"]["metadata"]["number_of_stages"] == 4
    assert conditions["execution_error"]["metadata"]["episode_oracle_tool_calls"] == 7
    assert conditions["mission_update"]["metadata"]["intervention_lags"] == [0]
    assert {i["type"] for i in conditions["combined"]["interventions"]} == {"mission_update",
                                                                          "execution_error"}
    manifest = json.loads((suite_dir / "manifest.json").read_text())
    assert len(manifest["fingerprint"]) == 64 and manifest["items"] == 5


def test_trace_agent_succeeds_everywhere(suite_dir, tmp_path):
    out = tmp_path / "runs"
    result = run_bench(BenchSpec(suite_dir, agent="trace", trials=2, slots=2, out=out, name="trace"))
    assert result.ran == 10 and not result.given_up
    trace = bench_report(out, ["trace"])["trace"]
    assert (trace["success"]["num"], trace["success"]["den"]) == (10, 10)
    assert all(r["num"] == r["den"] == 2 for r in trace["success_by_condition"].values())
    assert all(r["num"] == r["den"] == 2 for r in trace["conditional_robustness"].values())
    assert trace["pass_k"] == {"1": 1.0, "2": 1.0}
    assert trace["terminal_status_counts"]["combined"] == {"success": 2}
    # the printed report fits an 80-column terminal: nothing cut, every status named whole
    from rich.console import Console

    from magma_core.bench.report import print_report

    console = Console(width=80, record=True, color_system=None)
    print_report({"trace": trace}, console)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    for status in trace["taxonomy"]:
        assert all(word in text for word in status.split("_")), status
    assert "trace: agent trace" in text
    # the same command again: nothing to run; an edited suite is refused with one line
    assert run_bench(BenchSpec(suite_dir, agent="trace", trials=2, slots=2, out=out,
                               name="trace")).ran == 0
    edited = tmp_path / "edited"
    compile_suite("smoke", edited)
    index = json.loads((edited / "index.json").read_text())
    index["items"] = index["items"][:2]
    (edited / "index.json").write_text(json.dumps(index))
    with pytest.raises(UserError, match="changed since it was compiled"):
        run_bench(BenchSpec(edited, agent="trace", out=out, name="trace"))


@pytest.mark.slow
def test_weak_agent_is_less_robust_under_perturbation(suite_dir, tmp_path):
    """noisy-trace:0.1 (a trace agent making a mistake at 10% of its decisions), 8 trials per
    item: perturbed items need more decisions, so fewer succeed than their clean controls
    (deterministic: the agent's choices are a function of its seed and inputs)."""
    out = tmp_path / "runs"
    run_bench(BenchSpec(suite_dir, agent="trace", trials=8, slots=8, out=out, name="trace"))
    run_bench(BenchSpec(suite_dir, agent="noisy-trace:0.1", trials=8, slots=8, out=out, name="weak"))
    reports = bench_report(out, ["trace", "weak"])
    weak = reports["weak"]
    perturbed = [r for c, r in weak["success_by_condition"].items() if c != "clean"]
    perturbed_rate = sum(r["num"] for r in perturbed) / sum(r["den"] for r in perturbed)
    assert weak["success_clean"]["rate"] > perturbed_rate
    robust = weak["conditional_robustness"]
    assert sum(r["num"] for r in robust.values()) < sum(r["den"] for r in robust.values())
    assert weak["pass_k"]["8"] < weak["pass_k"]["1"] < 1
    html = write_html(reports, tmp_path / "report.html").read_text()
    assert html.count("<svg") == 3 and "weak" in html
    data = json.loads(write_json(reports, tmp_path / "report.json").read_text())
    assert set(data["runs"]) == {"trace", "weak"} and "all" in data["significant"]["weak"]


def test_report_cli_and_changed_suite_refused(suite_dir, tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["bench", "run", str(suite_dir), "--trials", "1", "--out", str(out),
                 "--name", "cli"]) == 0
    other = tmp_path / "other"
    spec = tmp_path / "one.yaml"
    spec.write_text("name: one\nconditions: [clean]\nskeletons:\n  - {preset: sorting.SortAll}\n")
    assert main(["bench", "compile", str(spec), "--out", str(other)]) == 0
    capsys.readouterr()
    assert main(["bench", "run", str(other), "--out", str(out), "--name", "cli"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fingerprint" in err[0]
    html = tmp_path / "r.html"
    assert main(["bench", "report", "cli", "--out", str(out), "--html", str(html)]) == 0
    printed = capsys.readouterr().out
    assert "Success (95% Wilson interval)" in printed and "pass^k" in printed
    assert main(["bench", "report", "nope", "--out", str(out)]) == 2


def _stored(db: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT run_name, episode FROM episodes WHERE run_name = "
                            "'bench.kill' ORDER BY run_name, episode").fetchall()


def test_kill_during_bench_run_then_resume_loses_and_duplicates_nothing(suite_dir, tmp_path):
    out = tmp_path / "runs"
    command = [sys.executable, "-m", "magma_core.cli", "bench", "run", str(suite_dir),
               "--trials", "2", "--out", str(out), "--name", "kill"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=os.environ | {"PYTHONWARNINGS": "ignore"})
    db = out / "magma.db"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        try:
            if db.exists() and len(_stored(db)) >= 3:
                break
        except sqlite3.OperationalError:  # the store is being created: its tables come next
            pass
        time.sleep(0.2)
    assert proc.poll() is None, "bench run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _stored(db)
    assert 3 <= len(before) < 10
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    after = _stored(db)
    assert len(after) == len(set(after)) == 10
    assert set(before) <= set(after)
