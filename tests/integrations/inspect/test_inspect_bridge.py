"""The Inspect bridge against the real Inspect AI and the real simulator (opt-in:
``make test-bridge-inspect``): ``inspect eval`` of a tiny suite, with the trace agent's replies
served as a model on loopback, gives every trial the verdict ``magma bench run --agent
openai:trace@URL`` gives it at the same server, stage by stage; its log carries MAGMA's
per-stage results; pass^k over epochs is the report's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="the Inspect bridge tests run in .venv-inspect")

from inspect_ai.log import read_eval_log  # noqa: E402

from magma_core.bench.report import bench_report  # noqa: E402
from magma_core.bench.suite import load_suite  # noqa: E402
from magma_core.integrations.inspect.task import magma_suite  # noqa: E402
from magma_core.store import open_store  # noqa: E402

from ..equality import bench_summaries, comparable, compile_tiny, requests_seen  # noqa: E402
from ..trace_model import MODEL, TraceModelServer, TraceReplies  # noqa: E402

pytestmark = [pytest.mark.bridges, pytest.mark.sim, pytest.mark.filterwarnings("ignore")]
TASK_FILE = Path(__file__).parents[3] / "src/magma_core/integrations/inspect/task.py"
INSPECT_MODEL = f"openai-api/local/{MODEL}"


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return compile_tiny(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def served(suite):
    items = load_suite(suite).items
    # the paraphrased item's model skips its first decision: that item fails, alike everywhere
    with TraceModelServer(TraceReplies(items, skip={items[1]["item_id"]: 1})) as server:
        yield server


def _inspect_cli(args: list[str], url: str, cwd: Path) -> subprocess.CompletedProcess:
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "LOCAL_BASE_URL": url, "LOCAL_API_KEY": "unused"}
    return subprocess.run([str(inspect), "eval", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_inspect_eval_gives_every_trial_the_bench_verdict(suite, served, tmp_path):
    first = len(served.requests)
    done = _inspect_cli([f"{TASK_FILE}@magma_suite", "-T", f"suite={suite}", "-T", "epochs=2",
                         "-T", "backend=cpu",
                         "-T", f"out={tmp_path / 'inspect-runs'}", "--model", INSPECT_MODEL,
                         "--log-dir", str(tmp_path / "logs"), "--display", "none"],
                        served.base_url, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    inspect_requests = served.requests[first:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    played = {(str(s.id), s.epoch): s for s in log.samples}
    assert len(played) == 4

    bench_first = len(served.requests)
    benched = bench_summaries(suite, f"openai:{MODEL}@{served.base_url}", tmp_path / "runs", trials=2)
    bench_requests = served.requests[bench_first:]
    assert set(played) == set(benched)
    for key, sample in played.items():
        summary = sample.store["magma"]
        assert comparable(summary) == comparable(benched[key]), key
        verdict = sample.scores["magma_verdict"]
        assert verdict.answer == summary["verdict"]
        assert verdict.value == (1.0 if summary["verdict"] == "success" else 0.0)
        assert verdict.metadata["stages"] == summary["stages"]  # what the viewer shows
        assert sample.scores["magma_stages"].value == summary["stages_passed"] / summary["num_stages"]
        steps = [e for e in sample.events if e.event == "info" and e.source == "magma"]
        assert len(steps) == summary["decisions"]
    assert {summary["verdict"] for summary in benched.values()} == {"success", "textual_hallucination"}

    # pass^k over epochs, as the bench report computes it over the same trials
    report = bench_report(tmp_path / "runs", ["bridge"])["bridge"]
    reduced = {(s.name, s.reducer): s.metrics for s in log.results.scores}
    for k in ("1", "2"):
        assert reduced[("magma_verdict", f"pass_hat_{k}")]["accuracy"].value == pytest.approx(report["pass_k"][k])
    assert reduced[("magma_verdict", "mean")]["accuracy"].value == pytest.approx(report["success"]["rate"])

    # the model was asked what MAGMA's openai: agent asks it: messages, tools, tool_choice and
    # max_tokens; Inspect's provider only adds "strict" to each function (its strict_tools)
    assert all(t["function"]["strict"] is True for r in inspect_requests for t in r.get("tools") or [])
    assert requests_seen(inspect_requests, drop=("strict",)) == requests_seen(bench_requests)
    assert {r.get("max_tokens") for r in inspect_requests} == {r.get("max_tokens") for r in bench_requests} == {1024}


def test_more_samples_than_slots_wait_for_a_slot(suite, served, tmp_path):
    """Inspect's max_samples above MAGMA's slots: the samples beyond the slots wait; none
    shares a slot, and the verdicts are those of the first test's trials."""
    task = magma_suite(str(suite), epochs=2, slots=1, backend="cpu")
    (log,) = inspect_ai.eval(task, model=INSPECT_MODEL, model_base_url=served.base_url,
                             model_args={"api_key": "unused"}, max_samples=4, display="none",
                             log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    verdicts = {(str(s.id), s.epoch): s.scores["magma_verdict"].answer for s in log.samples}
    items = [i["item_id"] for i in load_suite(suite).items]
    assert verdicts == {(items[0], 1): "success", (items[0], 2): "success",
                        (items[1], 1): "textual_hallucination", (items[1], 2): "textual_hallucination"}
    assert {s.store["magma"]["seed"] for s in log.samples} == {0, 1}


def test_a_sample_inspect_stops_is_stored_truncated_and_frees_its_slot(suite, served, tmp_path):
    """Inspect's message limit stops every sample mid-episode: each trial is ended as
    ``truncated`` (scored 0, its stages so far in the log) and its slot goes to the next."""
    task = magma_suite(str(suite), epochs=2, slots=1, backend="cpu", out=str(tmp_path / "runs"))
    (log,) = inspect_ai.eval(task, model=INSPECT_MODEL, model_base_url=served.base_url,
                             model_args={"api_key": "unused"}, max_samples=4, message_limit=4,
                             display="none", log_dir=str(tmp_path / "logs"))
    assert len(log.samples) == 4
    for sample in log.samples:
        summary = sample.store["magma"]
        assert summary["verdict"] == "truncated" and summary["status"] == "truncated"
        assert sample.scores["magma_verdict"].value == 0.0
        assert sample.scores["magma_verdict"].metadata["stages"][0]["name"] == "ObjectsToZones"
    with open_store(tmp_path / "runs") as store:  # MAGMA's run store has the four trials too
        assert sorted(s.status for s in store.episodes("inspect.tiny")) == ["truncated"] * 4
