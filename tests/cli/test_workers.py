"""``magma run --workers W``: worker processes sharing the pending episodes and one run store.

The end-to-end tests run the real command on the real simulator and kill processes for real
(a worker, the parent). The supervision tests drive ``run_in_workers`` with small stand-in
worker functions that speak the same pipe protocol, to pin down hand-out and failure reports.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from magma_core.agents import TraceAgent
from magma_core.runs import RunSpec
from magma_core.runs.loop import RunLoop
from magma_core.runs.workers import (
    EpisodeNote,
    WorkerJob,
    episodes_from_parent,
    run_in_workers,
)
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore

from .conftest import MAGMA, magma

WORKER_MARK = "spawn_main"  # in the command line of every multiprocessing "spawn" child


# -- helpers ------------------------------------------------------------------------------
def _stored(db: Path, name: str) -> list[tuple[int, int]]:
    """(episode, seed) rows of a run, in episode order."""
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT episode, seed FROM episodes WHERE run_name = ? ORDER BY episode", (name,)
        ).fetchall()


def _count_stored(db: Path, name: str) -> int:
    try:
        return len(_stored(db, name)) if db.exists() else 0
    except sqlite3.OperationalError:  # the store is still being created
        return 0


def _children(pid: int) -> list[int]:
    """Live (non-zombie) processes whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                out.append(int(entry.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start_run(workdir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([*MAGMA, "run", *args], cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 180) -> None:
    """Poll ``condition`` until true; fail if ``proc`` ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"the run ended too early: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("timed out waiting for the run")
        time.sleep(0.02)


def _workers_of(pid: int) -> list[int]:
    """The worker processes of ``pid``: spawned children, or forked ones (same command line)."""
    parent = _cmdline(pid)
    return [child for child in _children(pid)
            if WORKER_MARK in _cmdline(child) or _cmdline(child) == parent]


# -- RunLoop pulling from a source ----------------------------------------------------------
@pytest.mark.sim
def test_run_loop_pulls_episodes_only_when_a_slot_is_free(tmp_path):
    task = load_preset("cube.PickPlace")()
    log: list[str] = []

    def source():
        for episode in (4, 1, 6):
            log.append(f"pull {episode}")
            yield episode

    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "cube.PickPlace", {})
    with Executor(task, num_slots=2, seed=0) as executor:
        summaries = RunLoop(
            task, TraceAgent(task.perfect_trace()), executor, store, "r", episodes=8, seed=10,
            listener=lambda event, state, _: log.append(f"{event} {state.episode}"),
            episode_source=source(),
        ).run()
    assert sorted((s.episode, s.seed, s.status) for s in summaries) == [
        (1, 11, "success"), (4, 14, "success"), (6, 16, "success")]
    assert [(e, s) for e, s in _stored(tmp_path / "magma.db", "r")] == [(1, 11), (4, 14), (6, 16)]
    assert log[:4] == ["pull 4", "start 4", "pull 1", "start 1"]
    first_end = min(log.index("end 4"), log.index("end 1"))
    assert first_end < log.index("pull 6")  # the third episode waited for a free slot


# -- the real command -----------------------------------------------------------------------
@pytest.mark.sim
def test_two_workers_store_every_episode_once_with_its_seed(workdir):
    db = workdir / "out" / "magma.db"
    proc = _start_run(workdir, "sorting.SortAll", "--episodes", "8", "--slots", "2",
                      "--workers", "2", "--seed", "5", "--name", "w", "--out", "out")
    seen: set[int] = set()
    while proc.poll() is None:  # note the worker processes while they run
        seen.update(_workers_of(proc.pid))
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stdout + stderr
    assert len(seen) == 2, seen
    assert _stored(db, "w") == [(k, 5 + k) for k in range(8)]
    summary = json.loads((workdir / "out" / "w.summary.json").read_text())
    assert summary["config"]["workers"] == 2
    for episode in summary["episodes"]:
        assert episode["status"] == "success"
        assert episode["optimal"] == episode["stages_total"] == 4
    assert "8/8 episodes succeeded" in stdout
    assert re.search(r"episodes\s.*8/8", stdout), stdout  # the live display got every event
    assert "Traceback" not in stderr


@pytest.mark.sim
def test_a_killed_worker_is_reported_and_its_episodes_resume(workdir):
    args = ["cube.PickPlace", "--episodes", "40", "--workers", "2", "--name", "k",
            "--out", "out"]
    db = workdir / "out" / "magma.db"
    proc = _start_run(workdir, *args)
    _wait_for(lambda: _count_stored(db, "k") >= 2 and len(_workers_of(proc.pid)) == 2, proc)
    victim = _workers_of(proc.pid)[1]
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("magma: error:")]
    assert len(errors) == 1 and "was killed by SIGKILL" in errors[0], stderr
    assert errors[0].endswith("run the same command again to resume")
    stored = {episode for episode, _ in _stored(db, "k")}
    missing = set(range(40)) - stored
    assert len(missing) <= 1  # one slot: at most one episode was in flight in the victim
    reported = re.search(r"episodes not stored: ([\d, ]+);", errors[0])
    assert ({int(k) for k in reported.group(1).split(", ")} if reported else set()) == missing
    assert "run k" in stdout and "episodes succeeded" in stdout  # the table still printed

    resumed = magma("run", *args, cwd=workdir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(stored)} episode(s) already stored" in resumed.stdout
    assert _stored(db, "k") == [(k, k) for k in range(40)]


@pytest.mark.sim
def test_killing_the_parent_stops_its_workers_and_the_run_resumes(workdir):
    args = ["cube.PickPlace", "--episodes", "40", "--workers", "2", "--name", "p",
            "--out", "out"]
    db = workdir / "out" / "magma.db"
    proc = _start_run(workdir, *args)
    _wait_for(lambda: _count_stored(db, "p") >= 2 and len(_workers_of(proc.pid)) == 2, proc)
    children = _children(proc.pid)  # the workers and multiprocessing's resource tracker
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 30
    while any(_alive(child) for child in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [child for child in children if _alive(child)], "workers outlived their parent"
    stored = _stored(db, "p")
    assert 2 <= len(stored) < 40
    resumed = magma("run", *args, cwd=workdir)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(stored)} episode(s) already stored" in resumed.stdout
    assert _stored(db, "p") == [(k, k) for k in range(40)]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--workers", "0"], "expected a positive integer"),
        (["--workers", "two"], "expected a positive integer"),
        (["--workers", "2", "--agent", "ftp://x"], "unknown agent spec"),
    ],
)
def test_bad_options_fail_fast_with_one_line(args, expected, workdir):
    proc = magma("run", "cube.PickPlace", "--episodes", "4", *args, "--out", "out",
                 cwd=workdir, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("magma: error:") and expected in lines[0]


@pytest.mark.sim
def test_a_preset_that_needs_a_judge_is_refused_before_workers_start(workdir):
    proc = magma("run", "sorting.Question", "--episodes", "4", "--workers", "2",
                 "--out", "out", cwd=workdir, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pass --judge" in lines[0], proc.stderr
    assert "episodes" not in proc.stdout  # no progress display: no worker was started


# -- supervision, with stand-in workers --------------------------------------------------------
JOB = WorkerJob(spec=RunSpec("nope.Preset", backend="cpu", name="r", episodes=12), slots=1,
                store_path=Path("unused.db"))


def steady_worker(job: WorkerJob, index: int, conn) -> None:
    """Ends every episode it is handed (after a short pause), then says it is done."""
    for episode in episodes_from_parent(conn):
        time.sleep(0.01)
        conn.send(("event", "end", EpisodeNote(episode, index, 1), f"summary {episode}"))
    conn.send(("done",))


def worker_one_dies(job: WorkerJob, index: int, conn) -> None:
    """Worker 1 takes episodes 0 and 1, ends 0 and dies without a word; worker 0 waits for
    that (a marker file next to ``job.store_path``), then ends all the others."""
    marker = job.store_path.with_name("worker-1-took-two")
    if index == 0:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return steady_worker(job, index, conn)
    episodes = episodes_from_parent(conn)
    first = next(episodes)
    conn.send(("event", "end", EpisodeNote(first, index, 1), f"summary {first}"))
    next(episodes)
    marker.touch()
    os._exit(3)


def test_every_episode_is_handed_out_exactly_once():
    events: list[tuple] = []
    failures = run_in_workers(JOB, range(12), 3, lambda *event: events.append(event),
                              target=steady_worker)
    assert failures == []
    assert sorted(note.episode for _, note, _ in events) == list(range(12))
    assert all(payload == f"summary {note.episode}" for _, note, payload in events)


def test_a_dead_worker_is_reported_with_its_lost_episode_and_the_others_finish(tmp_path):
    job = dataclasses.replace(JOB, store_path=tmp_path / "magma.db")
    ended: list[int] = []
    failures = run_in_workers(job, range(12), 2, lambda e, note, p: ended.append(note.episode),
                              target=worker_one_dies)
    assert sorted(ended) == [0, *range(2, 12)]  # worker 0 took every episode left
    assert failures == ["worker 1 exited with status 3; episodes not stored: 1"]


def test_a_worker_with_a_user_error_reports_it_as_one_line():
    failures = run_in_workers(JOB, range(4), 2, lambda *event: None)
    assert len(failures) == 2
    for index, line in enumerate(failures):
        assert line.startswith(f"worker {index} failed: unknown scenario 'nope'"), line
        assert "\n" not in line and "episodes not stored" not in line


@pytest.mark.sim
def test_a_worker_that_raises_reports_where_in_one_line(tmp_path):
    (tmp_path / "a-file").touch()  # the store would have to be a folder under a file
    job = dataclasses.replace(JOB, spec=dataclasses.replace(JOB.spec, target="cube.PickPlace"),
                              store_path=tmp_path / "a-file" / "magma.db")
    failures = run_in_workers(job, range(4), 2, lambda *event: None)
    assert len(failures) == 2
    for index, line in enumerate(failures):
        assert re.fullmatch(rf"worker {index} failed: cannot open the run store .*a-file/magma.db "
                                rf"\(\[Errno 17\] File exists: .*a-file'\): choose another --out folder",
                            line), line
