"""Terminal statuses told apart from the records (a text answer where an action was needed:
``textual_hallucination``; replies that cannot be parsed: ``invalid_format``), cost from a
price table with prompt and completion prices, and ``--videos failures``: a real simulator, a
real OpenAI-compatible server on loopback, the CLI."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from magma_core.bench.report import bench_report
from magma_core.bench.suite import compile_suite
from magma_core.cli import main
from magma_core.render.video import probe_frames

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]

#: model -> (reply message, prompt tokens, completion tokens) of every completion
REPLIES = {
    "talker": ({"role": "assistant", "content": "Done: every cube is in its zone."}, 1000, 50),
    "garbler": ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "pick", "arguments": "{not json"}}]},
        200, 30),
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self._send(404, {"detail": "no model list"})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        message, prompt, completion = REPLIES[body["model"]]
        self._send(200, {"id": "x", "object": "chat.completion", "model": body["model"],
                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                   "total_tokens": prompt + completion}})


@pytest.fixture(scope="module")
def model_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def runs(model_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("statuses")
    spec = folder / "one.yaml"
    spec.write_text("name: one\nconditions: [clean]\nskeletons:\n  - {preset: sorting.SortAll}\n")
    compile_suite(spec, folder / "suite")
    out = folder / "runs"
    for name in ("talker", "garbler"):
        videos = ["--videos", "failures", "--video-kind", "schematic"] if name == "talker" else []
        assert main(["bench", "run", str(folder / "suite"), "--agent", f"openai:{name}@{model_server}",
                     "--trials", "2", "--out", str(out), "--name", name, *videos]) == 0
    return folder, out


def test_text_answers_and_unparsable_replies_get_their_own_statuses(runs):
    _, out = runs
    reports = bench_report(out, ["talker", "garbler"])
    assert reports["talker"]["terminal_status_counts"] == {"clean": {"textual_hallucination": 2}}
    assert reports["garbler"]["terminal_status_counts"] == {"clean": {"invalid_format": 2}}


def test_price_table_costs_prompt_and_completion_tokens(runs, tmp_path, capsys):
    _, out = runs
    prices = tmp_path / "prices.yaml"
    prices.write_text("talker: {input: 2.0, output: 8.0}\ngarbler: {input: 1.0, output: 4.0}\n")
    report = tmp_path / "report.json"
    assert main(["bench", "report", "talker", "--compare", "garbler", "--out", str(out),
                 "--prices", str(prices), "--json", str(report)]) == 0
    usage = json.loads(report.read_text())["runs"]
    # 2 trials x 3 idle decisions each (then the episode ends), one completion per decision
    talker, garbler = usage["talker"]["usage"], usage["garbler"]["usage"]
    assert (talker["prompt_tokens"], talker["completion_tokens"]) == (6000, 300)
    assert talker["cost"] == pytest.approx((6000 * 2.0 + 300 * 8.0) / 1e6)  # 0.0144
    assert talker["cost_per_episode"] == pytest.approx(0.0072)
    assert (garbler["prompt_tokens"], garbler["completion_tokens"]) == (1200, 180)
    assert garbler["cost"] == pytest.approx((1200 * 1.0 + 180 * 4.0) / 1e6)  # 0.00192
    assert garbler["price_model"] == "garbler" and garbler["price_output_per_mtok"] == 4.0
    capsys.readouterr()
    (tmp_path / "partial.json").write_text(json.dumps({"talker": {"input": 1, "output": 1}}))
    assert main(["bench", "report", "garbler", "--out", str(out), "--prices",
                 str(tmp_path / "partial.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'garbler'" in err[0] and "does not list" in err[0]
    (tmp_path / "bad.yaml").write_text("talker: {input: -1, output: 1}\n")
    assert main(["bench", "report", "talker", "--out", str(out), "--prices", str(tmp_path / "bad.yaml")]) == 2
    with pytest.raises(SystemExit) as exited:  # one price source or the other
        main(["bench", "report", "talker", "--out", str(out), "--prices", str(prices),
              "--price-per-mtok", "1"])
    assert exited.value.code == 2


def test_videos_of_failed_trials(runs):
    _, out = runs
    videos = sorted((out / "videos" / "bench.talker").glob("*.mp4"))
    assert [v.name for v in videos] == ["sorting.SortAll-0.v0.clean.t0.mp4",
                                        "sorting.SortAll-0.v0.clean.t1.mp4"]
    frames, size = probe_frames(videos[0])
    assert frames > 10 and size[0] > 100
    assert not (out / "videos" / "bench.garbler").exists()  # not asked for
