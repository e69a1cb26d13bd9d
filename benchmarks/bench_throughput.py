"""Throughput of ``magma bench run`` on the sorting suite: trials per minute by ``--slots``.

Compiles a subset of the built-in ``sorting`` suite (the same spec with ``--per-bucket``
LongSorting skeletons per length bucket instead of 7, every condition: 15 items by default),
then runs the real command ``magma bench run SUITE --agent trace --trials T --slots K
[--workers W]`` for each K (1 and 4 by default) on a fresh store, alternating rounds so that
machine noise hits each alike. Prints, per K: the median wall time of the whole command
(start-up included), trials per minute, the successes and the load average before the round.

With ``--agent-delay S`` the trials run in this process (``run_bench``, start-up excluded)
with the trace agent answering each decision after S seconds, as a model server would: the
slots then hide that latency. Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/bench_throughput.py [--per-bucket 1] [--trials 1]
        [--slots 1 4] [--workers 1] [--rounds 1] [--agent-delay 0]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from magma_core.scenarios.registry import find_suite


def subset_spec(per_bucket: int, folder: Path, smoke: bool = False) -> Path:
    """The built-in sorting spec with ``per_bucket`` skeletons per length bucket (``smoke``:
    one skeleton, no conditions)."""
    spec = yaml.safe_load(find_suite("sorting").read_text())
    spec["name"] = f"sorting-{per_bucket}"
    if smoke:
        spec["skeletons"] = spec["skeletons"][:1]
        spec["conditions"] = ["clean"]
    for skeleton in spec["skeletons"]:
        skeleton["seeds"] = per_bucket
    path = folder / "sorting-subset.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def run_once(suite: Path, trials: int, slots: int, workers: int, out: Path) -> tuple[float, int, int]:
    """(wall seconds, trials stored, successes) of one ``magma bench run``."""
    command = [sys.executable, "-m", "magma_core.cli", "bench", "run", str(suite), "--agent",
               "trace", "--trials", str(trials), "--slots", str(slots), "--workers", str(workers),
               "--out", str(out), "--name", "throughput"]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"magma bench run failed (slots={slots}):\n{proc.stdout}\n{proc.stderr[-2000:]}")
    with sqlite3.connect(out / "magma.db") as conn:
        rows = conn.execute("SELECT status FROM episodes WHERE run_name = 'bench.throughput'").fetchall()
    return wall, len(rows), sum(1 for (status,) in rows if status == "success")


def run_delayed(suite: Path, trials: int, slots: int, workers: int, out: Path,
                delay: float) -> tuple[float, int, int]:
    """(wall seconds, trials, successes) of ``run_bench`` with a trace agent that answers
    each decision after ``delay`` seconds."""
    import magma_core.bench.episodes as episodes
    from magma_core.agents.trace_per_task import SlotTraceAgent
    from magma_core.bench.runner import BenchSpec, run_bench

    class SlowTraceAgent(SlotTraceAgent):
        def decide(self, request_id, agent_input, candidate_index):  # type: ignore[no-untyped-def]
            time.sleep(delay)
            return super().decide(request_id, agent_input, candidate_index)

    real = episodes.build_bench_agent
    episodes.build_bench_agent = lambda agent, task, *_options: SlowTraceAgent()
    try:
        started = time.perf_counter()
        result = run_bench(BenchSpec(suite, trials=trials, slots=slots, workers=workers, out=out,
                                     name="throughput"))
        wall = time.perf_counter() - started
    finally:
        episodes.build_bench_agent = real
    with sqlite3.connect(out / "magma.db") as conn:
        rows = conn.execute("SELECT status FROM episodes WHERE run_name = 'bench.throughput'").fetchall()
    assert result.ran == len(rows)
    return wall, len(rows), sum(1 for (status,) in rows if status == "success")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-bucket", type=int, default=1, help="skeletons per length bucket (1)")
    parser.add_argument("--trials", type=int, default=1, help="trials per item (1)")
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 4], help="slot counts (1 4)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per slot count (1)")
    parser.add_argument("--agent-delay", type=float, default=0.0,
                        help="seconds the trace agent takes per decision, in-process (0: the CLI)")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.per_bucket, args.trials, args.slots, args.rounds = 1, 1, [1], 1
        args.agent_delay = args.agent_delay or 0.001  # in this process: no start-up
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = folder / "suite"
        subprocess.run([sys.executable, "-m", "magma_core.cli", "bench", "compile",
                        str(subset_spec(args.per_bucket, folder, args.smoke)), "--out", str(suite)],
                       check=True, capture_output=True)
        items = json.loads((suite / "manifest.json").read_text())["items"]
        print(f"suite: {items} items of the sorting suite ({args.per_bucket} per length bucket), "
              f"{args.trials} trial(s) each, trace agent, workers {args.workers}, "
              f"agent delay {args.agent_delay}s")
        walls: dict[int, list[float]] = {k: [] for k in args.slots}
        results: dict[int, tuple[int, int]] = {}
        loads: dict[int, list[float]] = {k: [] for k in args.slots}
        for round_index in range(args.rounds):
            for slots in args.slots:
                loads[slots].append(os.getloadavg()[0])
                out = folder / f"runs-{slots}-{round_index}"
                if args.agent_delay > 0:
                    wall, stored, ok = run_delayed(suite, args.trials, slots, args.workers, out,
                                                   args.agent_delay)
                else:
                    wall, stored, ok = run_once(suite, args.trials, slots, args.workers, out)
                walls[slots].append(wall)
                results[slots] = (stored, ok)
        print(f"{'slots':>5} {'wall s':>8} {'trials':>6} {'success':>7} {'trials/min':>10} {'load':>5}")
        base = None
        for slots in args.slots:
            wall = statistics.median(walls[slots])
            stored, ok = results[slots]
            rate = 60 * stored / wall
            base = base or rate
            print(f"{slots:>5} {wall:>8.1f} {stored:>6} {ok:>7} {rate:>10.1f} "
                  f"{statistics.mean(loads[slots]):>5.1f}   x{rate / base:.2f}")


if __name__ == "__main__":
    main()
