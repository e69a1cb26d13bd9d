"""No reply can crash a run: ``magma run`` (a real subprocess, the real simulator) against a
loopback agent server sending seeded random replies from ``fuzz_replies.REPLY_KINDS``.

The suite sends a few hundred replies; ``benchmarks/fuzz_agent_replies.py`` sends 10,000.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from magma_core.agents import TraceAgent
from magma_core.agents.fuzz_replies import REPLY_KINDS, fuzzing_hook
from magma_core.agents.loopback import LoopbackAgentServer
from magma_core.runs.assembly import load_task
from magma_core.text_safety import is_safe

from .conftest import magma

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


def check_run(out, name: str, episodes: int, proc) -> list[sqlite3.Row]:
    """The invariants: no traceback, every episode stored once, none as ``error``, all text safe."""
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "magma.db")
    conn.row_factory = sqlite3.Row
    rows = conn.execute("SELECT episode, status, record FROM episodes WHERE run_name = ?",
                        (name,)).fetchall()
    assert sorted(r["episode"] for r in rows) == list(range(episodes))
    assert not [r["episode"] for r in rows if r["status"] == "error"]
    for row in rows:
        assert is_safe(json.dumps(json.loads(row["record"]), ensure_ascii=False))
    for (say,) in conn.execute("SELECT say FROM decisions WHERE run_name = ?", (name,)):
        assert say is None or is_safe(say)
    return rows


def test_lone_surrogate_reply_is_stored_safely(tmp_path):
    trace = load_task(PRESET).perfect_trace()
    hook = lambda request, answer: REPLY_KINDS["lone_surrogate"](None, answer)  # noqa: E731
    with LoopbackAgentServer(TraceAgent(trace), reply=hook) as server:
        proc = magma("run", PRESET, "--agent", server.url, "--episodes", "1", "--out", str(tmp_path),
                     "--name", "surrogate", cwd=tmp_path)
        check_run(tmp_path, "surrogate", 1, proc)
        export = magma("runs", "export", "surrogate", "--out", str(tmp_path), "--output",
                       str(tmp_path / "steps.jsonl"), cwd=tmp_path)
        show = magma("runs", "show", "surrogate", "--out", str(tmp_path), "--episode", "0", cwd=tmp_path)
    assert export.returncode == 0 and show.returncode == 0, export.stderr + show.stderr
    steps = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text("utf-8").splitlines()]
    says = [step["decision"].get("say") for step in steps]
    assert "\ufffd and \ufffd" in says  # the surrogates arrived, replaced


def test_random_replies_never_crash_a_run(tmp_path):
    trace = load_task(PRESET).perfect_trace()
    hook = fuzzing_hook(seed=20260, good_share=0.4)
    with LoopbackAgentServer(TraceAgent(trace), reply=hook) as server:
        proc = magma("run", PRESET, "--agent", server.url, "--episodes", "40", "--slots", "4",
                     "--agent-timeout", "20", "--out", str(tmp_path), "--name", "fuzz",
                     cwd=tmp_path, timeout=600)
        requests = server.requests
    check_run(tmp_path, "fuzz", 40, proc)
    assert requests >= 100
    assert len(hook.counts) >= 15, hook.counts  # most kinds of reply were sent
