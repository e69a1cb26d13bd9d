"""``magma run --ray``: engine actors on a local Ray cluster (2 CPUs, one per module), the
driver alone writing the store.

The end-to-end tests run the real command on the real simulator and kill an actor's process
for real; the supervision tests drive ``drive_units`` with small stand-in jobs that speak the
actors' protocol, to pin down retries and failure lines. Without Ray they skip.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'magma[ray]')")

from magma_core.cli import main  # noqa: E402
from magma_core.runs import Pacing, RunResult, RunSpec, run  # noqa: E402
from magma_core.runs.ray_actors import Channel  # noqa: E402
from magma_core.runs.ray_cluster import RayCluster, connect, disconnect  # noqa: E402
from magma_core.runs.ray_driver import drive_units, split  # noqa: E402
from magma_core.store import open_store  # noqa: E402

PRESET = "cube.PickPlace"
EPISODES = 8


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster of 2 CPUs for the module; runs join it instead of starting theirs."""
    connected = connect(RayCluster(num_cpus=2))
    # The stand-in jobs below live in this test module: ship them to the actors by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if connected:
        disconnect()


def _records(result: RunResult) -> list[dict]:
    """The stored episode records, without what depends on timing or on which slot ran them."""
    with open_store(result.store_path.parent, create=False) as store:
        records = [store.episode_record(result.name, s.episode) for s in result.summaries]
    for record in records:
        record.pop("timings", None)
        record.pop("slot")
        record["agent"].pop("latency_s", None)
        record["agent"].pop("per_decision", None)
        for step in record["steps"]:
            step.pop("timings", None)
    return records


class Events:
    """A listener keeping the events per episode, the warnings and each seat's actor process."""

    def __init__(self, on_start=None) -> None:
        self.by_episode: dict[int, list[str]] = {}
        self.warnings: list[str] = []
        self.actors: dict[int, int] = {}  # seat -> pid
        self.on_start = on_start

    def __call__(self, event: str, episode: Any, payload: Any) -> None:
        if event == "warning":
            self.warnings.append(payload)
        elif event == "actor":
            self.actors[payload.seat] = payload.pid
        elif event in ("start", "step", "end"):
            self.by_episode.setdefault(episode.episode, []).append(event)
            if event == "start" and self.on_start is not None:
                self.on_start(self, episode)


@pytest.fixture(scope="module")
def without_ray(tmp_path_factory) -> RunResult:
    out = tmp_path_factory.mktemp("plain")
    result = run(RunSpec(PRESET, episodes=EPISODES, slots=2, out=out, name="r"))
    assert result.ok
    return result


# -- end to end ----------------------------------------------------------------------------
@pytest.mark.sim
def test_the_cli_on_ray_stores_the_same_records_as_without_ray(tmp_path, without_ray, capsys):
    code = main(["run", PRESET, "--episodes", str(EPISODES), "--slots", "2", "--ray", "--workers", "2",
                 "--out", str(tmp_path), "--name", "r"])
    stdout = capsys.readouterr().out
    assert code == 0
    assert "8/8 episodes succeeded" in stdout and "run r" in stdout  # the same table
    with open_store(tmp_path, create=False) as store:
        summaries = store.episodes("r")
        assert [(s.episode, s.seed) for s in summaries] == [(k, k) for k in range(EPISODES)]
        assert store.count("decisions", "r") == sum(s.decisions for s in summaries)
    on_ray = RunResult("r", tmp_path / "magma.db", tmp_path / "r.summary.json", summaries)
    assert _records(on_ray) == _records(without_ray)


@pytest.mark.sim
def test_an_actor_killed_mid_run_loses_nothing_and_duplicates_nothing(tmp_path, without_ray):
    killed: list[int] = []

    def kill_one_actor(events: Events, episode: Any) -> None:
        if episode.episode == 3 and not killed:  # kill the actor that has just started it
            victim = events.actors[episode.slot // 2]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    events = Events(on_start=kill_one_actor)
    result = run(RunSpec(PRESET, episodes=EPISODES, slots=2, out=tmp_path, name="r",
                         ray=RayCluster(actors=2)), events)
    assert killed, "no actor was killed"
    assert result.failures == [] and result.ok
    assert any("died" in line and "will run again" in line for line in events.warnings)
    assert [(s.episode, s.seed, s.status) for s in result.summaries] == [
        (k, k, "success") for k in range(EPISODES)]
    with open_store(tmp_path, create=False) as store:
        assert store.count("episodes", "r") == EPISODES
        assert store.count("decisions", "r") == sum(s.decisions for s in result.summaries)
    assert _records(result) == _records(without_ray)
    for episode in range(EPISODES):  # every episode ended once, whichever actor ran it
        assert events.by_episode[episode].count("end") == 1


class CountingAgentServer:
    """``magma serve-agent``'s app for the trace agent on loopback (uvicorn in a thread), each
    ``/v1/responses`` request held ``delay_s``; ``peak``: most requests in flight at once."""

    def __init__(self, delay_s: float = 0.3) -> None:
        import uvicorn

        from magma_core.agents import build_agent
        from magma_core.cli.serve_agent import create_app
        from magma_core.runs.assembly import load_task

        self.app = create_app(build_agent("trace", trace=load_task(PRESET).perfect_trace()))
        self.delay_s, self.now, self.peak, self.requests = delay_s, 0, 0, 0
        config = uvicorn.Config(self._counting, host="127.0.0.1", port=0, log_level="warning",
                                interface="asgi3")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def _counting(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/responses":
            self.now += 1
            self.requests += 1
            self.peak = max(self.peak, self.now)
            try:
                await asyncio.sleep(self.delay_s)
                await self.app(scope, receive, send)
            finally:
                self.now -= 1
        else:
            await self.app(scope, receive, send)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.mark.sim
def test_actors_share_an_http_agent_within_the_total_concurrency(tmp_path):
    server = CountingAgentServer()
    try:
        result = run(RunSpec(PRESET, agent=server.url, episodes=EPISODES, slots=2, out=tmp_path,
                             pacing=Pacing(concurrency=2), ray=RayCluster(actors=2)))
    finally:
        server.close()
    assert result.ok and [s.status for s in result.summaries] == ["success"] * EPISODES
    assert server.requests == sum(s.decisions for s in result.summaries)
    assert server.peak <= 2  # --concurrency 2 in total: one request in flight per actor


# -- supervision, with stand-in jobs -------------------------------------------------------
@dataclass(frozen=True)
class EchoJob:
    """Answers each unit with its square; dies (the whole process) on ``fatal``, raises on
    ``broken``."""

    fatal: int | None = None
    broken: int | None = None

    def run(self, index: int, units: Iterator[Any], channel: Channel) -> None:
        for unit in units:
            if unit == self.fatal:
                os._exit(1)
            if unit == self.broken:
                raise ValueError(f"cannot do unit {unit}")
            channel.send(("result", unit, unit * unit))


def _drive(job: EchoJob, units: list[int], **kwargs) -> tuple[dict[int, int], list[str], list]:
    results: dict[int, int] = {}
    warnings: list = []

    def on_result(unit: int, payload: int) -> None:
        assert unit not in results, f"unit {unit} stored twice"
        results[unit] = payload

    failures = drive_units(lambda seat: job, units, actors=2, on_result=on_result,
                           listener=lambda event, _, payload: event == "warning"
                           and warnings.append(payload), **kwargs)
    return results, failures, warnings


def test_every_unit_is_stored_once():
    results, failures, _ = _drive(EchoJob(), list(range(10)))
    assert failures == [] and results == {k: k * k for k in range(10)}


def test_a_unit_that_kills_every_actor_is_given_up_after_three_attempts():
    results, failures, warnings = _drive(EchoJob(fatal=3), list(range(8)))
    assert results == {k: k * k for k in range(8) if k != 3}
    assert failures == ["episode 3 was lost with 3 Ray actors that died; not stored"]
    assert sum("episodes 3 will run again" in w for w in warnings) == 2


def test_an_actor_whose_job_raises_is_one_line_and_its_unit_is_not_retried():
    results, failures, _ = _drive(EchoJob(broken=2), list(range(6)))
    assert 2 not in results and set(results) | {2} == set(range(6))
    assert len(failures) == 1
    assert failures[0].startswith("Ray actor ") and "ValueError: cannot do unit 2" in failures[0]
    assert failures[0].endswith("episodes not stored: 2")


def test_concurrency_is_split_over_the_actors():
    assert split(None, 3) == [None, None, None]
    assert split(8, 3) == [3, 3, 2] and sum(split(8, 3)) == 8
    assert split(2, 2) == [1, 1]


# -- the driver killed with kill -9 (slow: two commands, each with its own local cluster) ---
def _stored(db: Path) -> list[tuple[int, int]]:
    import sqlite3

    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT episode, seed FROM episodes WHERE run_name = 'k' "
                                "ORDER BY episode").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


@pytest.mark.slow
@pytest.mark.sim
def test_a_driver_killed_with_kill_9_resumes_with_the_same_command(tmp_path):
    import subprocess

    command = [sys.executable, "-m", "magma_core.cli", "run", PRESET, "--episodes", "40",
               "--ray", "--name", "k", "--out", "out"]
    db = tmp_path / "out" / "magma.db"
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while len(_stored(db)) < 3:
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended too early"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    stored = len(_stored(db))
    assert 3 <= stored < 40
    resumed = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "COLUMNS": "200"})
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{stored} episode(s) already stored" in resumed.stdout
    assert _stored(db) == [(k, k) for k in range(40)]
