"""``magma serve-agent`` as a real subprocess: HttpAgent -> magma serve-agent -> TraceAgent."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest

from magma_core.agents import HttpAgent
from magma_core.cli import main
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.tasks.perfect_trace import MessageEvent, PerfectTrace, ToolCallEvent

from .agent_helpers import make_request

TRACE = PerfectTrace([ToolCallEvent([ToolCall("pick", {"object_name": "cup"}, None)]), MessageEvent("Done.")])


def _first_line(process: subprocess.Popen, timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


def test_round_trip_through_the_cli_server(tmp_path):
    trace_file = tmp_path / "trace.json"
    trace_file.write_text(json.dumps(TRACE.to_dict()))
    process = subprocess.Popen(
        [sys.executable, "-m", "magma_core.cli", "serve-agent", "--agent", "trace",
         "--trace-file", str(trace_file), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = _first_line(process, timeout=120)
        assert line.startswith("serving magma.trace on http://127.0.0.1:"), (line, process.poll())
        url = line.split(" on ", 1)[1].strip()
        with HttpAgent(url, timeout=10, retries=0) as agent:
            agent.check(wait_s=10)
            first = agent.respond(make_request(num_outputs=2))
            call = first[0].output.tool_calls[0]
            assert (call.name, call.target_robot_name) == ("pick", "r1")
            second = agent.respond(make_request(memory=first[1].memory, kind="env", content="ok"))
            assert second[0].output.say == "Done."
    finally:
        process.terminate()
        process.communicate(timeout=20)


@pytest.mark.parametrize("argv, message", [
    (["--agent", "trace"], "exactly one of --preset"),
    (["--agent", "gpt"], "unknown agent spec"),
    (["--agent", "openai:m", "--trace-file", "x.json"], "only apply to --agent trace"),
    (["--agent", "trace", "--trace-file", "/nonexistent/trace.json"], "cannot read trace file"),
    (["--agent", "trace", "--preset", "nosuchscenario.Nothing"], "cannot load the perfect trace"),
])
def test_user_errors_are_one_line(capsys, argv, message):
    assert main(["serve-agent", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_sigterm_stops_the_server_at_once_cancelling_model_requests(scripted):
    """A model that takes 60 s to answer: SIGTERM stops serve-agent within a second, and the
    request in flight is answered (cancelled) rather than left hanging."""
    scripted.routes["GET /v1/models"] = [{"object": "list", "data": [{"id": "slow"}]}]
    scripted.routes["POST /v1/chat/completions"] = [("hang", 60)]
    process = subprocess.Popen(
        [sys.executable, "-m", "magma_core.cli", "serve-agent", "--agent", f"openai:slow@{scripted.url}/v1",
         "--port", "0", "--model-timeout", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = _first_line(process, timeout=120)
        assert line.startswith("serving magma.openai_chat on "), (line, process.poll())
        url = line.split(" on ", 1)[1].strip()
        replies: list = []
        client = HttpAgent(url, timeout=30, retries=0)
        thread = threading.Thread(target=lambda: replies.append(client.respond(make_request())), daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while "POST /v1/chat/completions" not in scripted.calls and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "POST /v1/chat/completions" in scripted.calls
        start = time.monotonic()
        process.terminate()
        process.wait(timeout=10)
        assert time.monotonic() - start < 1.0
        thread.join(5)
        assert replies and replies[0][0].status == "error"
        client.close()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=20)
