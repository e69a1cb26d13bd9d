"""``magma run`` / ``magma runs`` as a user runs them: real subprocesses, real simulator."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from .conftest import MAGMA, magma

pytestmark = pytest.mark.sim


def _episodes(db, name):
    with sqlite3.connect(db) as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT episode FROM episodes WHERE run_name = ? ORDER BY episode", (name,)
            )
        ]


@pytest.mark.parametrize("preset", ["cube.PickPlace", "cube.MovedCube", "cube.Machine"])
def test_trace_agent_solves_every_stage_optimally(preset, workdir):
    proc = magma("run", preset, "--agent", "trace", "--episodes", "2", "--slots", "2",
                 "--out", "out", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((workdir / "out" / f"{preset}.summary.json").read_text())
    totals = summary["totals"]
    assert totals["episodes"] == 2 and totals["success"] == 2
    assert totals["optimal"] == totals["stages_total"] > 0
    assert totals["acceptable"] == totals["exceeded"] == 0
    assert "2/2 episodes succeeded" in proc.stdout
    listing = magma("runs", "show", preset, "--out", "out", cwd=workdir)
    assert listing.returncode == 0 and "success" in listing.stdout
    runs = magma("runs", "list", "--out", "out", cwd=workdir)
    assert runs.returncode == 0 and preset in runs.stdout
    record = json.loads(
        magma("runs", "show", preset, "--out", "out", "--episode", "1", cwd=workdir).stdout
    )
    assert record["status"] == "success" and record["seed"] == 1
    assert all(stage["state"] == "OPTIMAL" for stage in record["stages"])


def test_killed_run_resumes_without_loss_or_duplicates(workdir):
    args = ["run", "cube.PickPlace", "--episodes", "12", "--name", "resumable", "--out", "out"]
    db = workdir / "out" / "magma.db"
    proc = subprocess.Popen([*MAGMA, *args], cwd=workdir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            if db.exists():
                try:
                    if len(_episodes(db, "resumable")) >= 2:
                        break
                except sqlite3.OperationalError:
                    pass
            if proc.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    stored = _episodes(db, "resumable")
    assert 2 <= len(stored) < 12, f"kill came too late or too early: {stored}"
    assert stored == list(range(len(stored)))
    listing = magma("runs", "list", "--out", "out", cwd=workdir)  # the killed run says it resumes
    assert f"{len(stored)}/12" in listing.stdout and "incomplete" in listing.stdout
    assert "resumes" in listing.stdout
    resumed = magma(*args, cwd=workdir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(stored)} episode(s) already stored" in resumed.stdout
    assert _episodes(db, "resumable") == list(range(12))
    with sqlite3.connect(db) as conn:
        per_episode = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT episode || '-' || stage) FROM stage_outcomes "
            "WHERE run_name = 'resumable'"
        ).fetchone()
    assert per_episode[0] == per_episode[1] == 12 * 2  # two stages each, none duplicated


def test_run_against_serve_agent_over_http(workdir):
    server = subprocess.Popen(
        [*MAGMA, "serve-agent", "--agent", "trace", "--preset", "cube.PickPlace", "--port", "0"],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("serving"), line + server.stderr.read()
        url = line.split(" on ")[-1].strip()
        assert url.startswith("http://127.0.0.1:")
        proc = magma("run", "cube.PickPlace", "--agent", url, "--episodes", "2", "--slots", "2",
                     "--out", "out", cwd=workdir)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        totals = json.loads((workdir / "out" / "cube.PickPlace.summary.json").read_text())["totals"]
        assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"]
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "nope.Preset"], "unknown scenario 'nope'"),
        (["run", "cube.Nope"], "has no preset 'Nope'"),
        (["run", "cube.PickPlace", "--agent", "ftp://x"], "unknown agent spec"),
        (["run", "cube.PickPlace", "--agent", "http://127.0.0.1:9"], "is not usable"),
        (["run", "cube.PickPlace", "--episodes", "0"], "expected a positive integer"),
        (["run", "cube.PickPlace", "--slots", "two"], "expected a positive integer"),
        (["run", "cube.PickPlace", "--name", "../x"], "run names use"),
        (["run", "cube.PickPlace", "--bogus"], "option --bogus needs a value"),
        (["run", "cube.PickPlace", "--bogus", "3"], "bogus"),
        (["runs", "show", "nothing"], "no run store"),
        (["scenarios", "show", "nope"], "unknown scenario"),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, expected, workdir):
    proc = magma(*args, cwd=workdir, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("magma: error:"), proc.stderr
    assert expected in lines[-1]
    assert len([line for line in lines if line.startswith("magma: error")]) == 1


def test_scenarios_list_and_show(workdir):
    listing = magma("scenarios", "list", cwd=workdir)
    assert listing.returncode == 0 and "cube" in listing.stdout and "PickPlace" in listing.stdout
    show = magma("scenarios", "show", "cube", cwd=workdir)
    assert show.returncode == 0
    assert "cube.MovedCube" in show.stdout and "MagmaCube-v1" in show.stdout
    kitchen = magma("scenarios", "show", "kitchen", cwd=workdir)  # its suite, by the name compile takes
    assert kitchen.returncode == 0 and "suites:\n  kitchen  ->" in kitchen.stdout


def test_module_entry_matches_console_script():
    assert MAGMA[:2] == [sys.executable, "-m"]


def test_run_with_an_openai_compatible_model(workdir):
    """``--agent openai:MODEL@URL`` against a loopback chat-completions endpoint: the model's
    tool calls drive the robot, a malformed reply is an agent error, not a crash."""
    from agents.agent_helpers import FakeOpenAI, completion, tool_call

    server = FakeOpenAI()
    server.script = [
        completion(tool_calls=[tool_call("pick", {"object": "cube"})]),
        completion(tool_calls=[tool_call("place", "{not json")]),  # malformed arguments
        completion(tool_calls=[tool_call("place", {"area": "zone_a"})]),
        completion("The cube is in zone A."),
    ]
    try:
        proc = magma("run", "cube.PickPlace", "--agent", f"openai:fake-model@{server.base_url}",
                     "--out", "out", "--max-tokens", "77", "--model-seed", "3",
                     "--extra-body", '{"min_p": 0.1}', cwd=workdir, env={"OPENAI_API_KEY": "test-key"})
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((workdir / "out" / "cube.PickPlace.summary.json").read_text())
    [episode] = summary["episodes"]
    assert episode["status"] == "success" and episode["tool_calls"] == 2
    assert episode["optimal"] == 2 and episode["decisions"] == 4
    assert episode["total_tokens"] == 4 * 18  # the usage of every model call, summed
    assert summary["totals"]["total_tokens"] == 4 * 18
    sent = server.requests[0]
    assert sent["model"] == "fake-model"
    assert (sent["max_tokens"], sent["seed"], sent["min_p"]) == (77, 3, 0.1)
    assert summary["config"]["agent_options"] == {"max_tokens": 77, "seed": 3, "extra_body": {"min_p": 0.1}}
    assert {t["function"]["name"] for t in sent["tools"]} >= {"pick", "place", "detect_objects"}
    # stage-aware decoding: the action stages ask for a call; the text-only completion stage
    # offers only the tool it allows before the answer
    last = server.requests[-1]
    assert sent["tool_choice"] == "required" and last["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in last["tools"]] == ["detect_objects"]
    record = json.loads(magma("runs", "show", "cube.PickPlace", "--out", "out", "--episode", "0",
                              cwd=workdir).stdout)
    assert "error" in record["steps"][1]["decision"]  # the malformed reply, recorded
    per_decision = record["agent"]["per_decision"]
    assert [d["total_tokens"] for d in per_decision] == [18, 18, 18, 18]
    assert all(d["latency_s"] > 0 for d in per_decision)
    # the exact request and the raw reply of every step: shown one step at a time, exported
    step = json.loads(magma("runs", "show", "cube.PickPlace", "--out", "out", "--episode", "0",
                            "--step", "1", cwd=workdir).stdout)
    exchange = step["agent"]["model_calls"][0]
    assert step["step_index"] == 1 and "{not json" in exchange["output_raw"]
    assert exchange["request"] == server.requests[1] and exchange["attempt_log"][0]["outcome"] == "ok"
    rows = [json.loads(line) for line in magma("runs", "export", "cube.PickPlace", "--out", "out",
                                               "--what", "steps", cwd=workdir).stdout.splitlines()]
    assert [r["agent"]["model_calls"][0]["request"] for r in rows] == server.requests
    missing = magma("runs", "show", "cube.PickPlace", "--out", "out", "--episode", "0", "--step", "9",
                    cwd=workdir)
    assert missing.returncode == 2 and "has no step 9" in missing.stderr


def test_more_user_errors_are_one_line(workdir):
    (workdir / "bad").mkdir()
    (workdir / "bad" / "magma.db").write_text("this is not a database, not at all")
    (workdir / "trace.json").write_text("[]")
    (workdir / "a_file").write_text("")
    cases = [
        (["runs", "list", "--out", "bad"], "is not a MAGMA store"),
        (["serve-agent", "--agent", "trace", "--port", "70000"], "port number 0-65535"),
        (["serve-agent", "--agent", "trace", "--log-level", "loud"], "invalid choice"),
        (["serve-agent", "--agent", "trace", "--trace-file", "trace.json"], "cannot read trace file"),
        (["run", "cube.PickPlace", "--out", "a_file"], "cannot open the run store"),
        (["run", "cube.PickPlace", "--max-tokens", "-1"], "max_tokens must be at least 0"),
        (["run", "cube.PickPlace", "--max-tokens", "64"], "does not apply to a trace agent"),
        (["run", "cube.PickPlace", "--agent-config", "missing.toml"], "cannot read agent config"),
        (["serve-agent", "--agent", "openai:m@http://127.0.0.1:9/v1", "--extra-body", "[1]"],
         "expected a JSON object"),
    ]
    import torch

    if not torch.cuda.is_available():
        cases.append((["run", "cube.PickPlace", "--backend", "gpu"], "cannot start the simulator"))
    for args, expected in cases:
        proc = magma(*args, cwd=workdir, timeout=120)
        assert proc.returncode != 0, args
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        assert expected in proc.stderr.strip().splitlines()[-1], (args, proc.stderr)
