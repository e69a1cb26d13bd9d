"""A trainer killed mid-rollout leaves the store consistent, and a restarted one goes on."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from magma_core.rl import TaskSource, TrainingEnv
from magma_core.store import open_store

pytestmark = pytest.mark.sim

TRAINER = textwrap.dedent("""
    import os, signal, sys
    from magma_core.rl import TaskSource, TrainingEnv
    env = TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0]), slots=3, out=sys.argv[1],
                      name="train", backend="cpu")
    pick, place, answer = env.source[0].task.perfect_trace().decisions()
    for _ in range(2):  # two whole groups, stored as they end
        group = env.group(0, size=2)
        group.reset()
        for d in (pick, place, answer):
            group.step([r.message_for(d) for r in group.rollouts])
    group = env.group(0, size=3)  # then killed with three rollouts in flight
    group.reset()
    group.step([r.message_for(pick) for r in group.rollouts])
    print("killing", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_kill_and_restart_keep_the_store_consistent(tmp_path):
    proc = subprocess.run([sys.executable, "-c", TRAINER, str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    conn = sqlite3.connect(tmp_path / "magma.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    store = open_store(tmp_path, create=False)
    summaries = store.episodes("train")
    assert [s.episode for s in summaries] == [0, 1, 2, 3]  # only finished rollouts, all whole
    for summary in summaries:
        record = store.episode_record("train", summary.episode)
        assert record["status"] == "success" and summary.decisions == len(record["steps"]) == 3
        assert store.episode_world("train", summary.episode) is not None
    assert store.count("decisions", "train") == 12
    store.close()
    with TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0]), slots=1, out=tmp_path,
                     name="train", backend="cpu") as env:
        group = env.group(0, size=1)
        group.reset()
        group[0].step("nothing to do")
        group[0].end()
        assert group[0].episode == 4
    store = open_store(tmp_path, create=False)
    assert [s.episode for s in store.episodes("train")] == [0, 1, 2, 3, 4]
    assert json.loads(json.dumps(store.episode_record("train", 4)))["status"] == "truncated"
    store.close()
    assert os.path.exists(tmp_path / "magma.db")
