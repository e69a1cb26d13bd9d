"""An agent that stops answering (HTTP 500 on a real loopback server): the item is retried up to
3 attempts, then its missing trials count as ``infrastructure_failure``."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from magma_core.bench.report import bench_report
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite
from magma_core.store.bench_store import open_bench_store

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]
INFO = {"agent_id": "down", "agent_version": "1", "capabilities": {}, "protocol_version": "2.0"}


class _Handler(BaseHTTPRequestHandler):
    posts = 0

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
        self._send(200, {"status": "ready"} if self.path == "/health" else INFO)

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).posts += 1
        self._send(500, {"detail": "model crashed"})


@pytest.fixture
def down_agent():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_outage_retried_three_times_then_infrastructure_failure(down_agent, tmp_path):
    spec = tmp_path / "one.yaml"
    spec.write_text("name: one\nconditions: [clean]\nskeletons:\n  - {preset: sorting.SortAll}\n")
    compile_suite(spec, tmp_path / "suite")
    out = tmp_path / "runs"
    result = run_bench(BenchSpec(tmp_path / "suite", agent=down_agent, trials=2, out=out, name="down"))
    assert result.given_up == ["sorting.SortAll-0.v0.clean"] and result.ran == 0
    with open_bench_store(out) as store:
        assert store.failures("down") == {"sorting.SortAll-0.v0.clean": 3}
    report = bench_report(out, ["down"])["down"]
    assert report["terminal_status_counts"]["clean"] == {"infrastructure_failure": 2}
    assert (report["success"]["num"], report["success"]["den"]) == (0, 2)
    # running again does not retry a given-up item (nothing duplicated)
    again = run_bench(BenchSpec(tmp_path / "suite", agent=down_agent, trials=2, out=out, name="down"))
    assert again.given_up == ["sorting.SortAll-0.v0.clean"] and again.ran == 0
