"""Throughput of ``magma run`` with one worker process against two.

Runs the same workload (trace agent, a fresh run store each time) as the real command,
``magma run PRESET --episodes N --slots K --workers W``, for W = 1 and W = 2, alternating
rounds so machine noise hits both alike. Prints, per W, the median wall time of the whole
command (start-up included: with W > 1 every worker imports the simulator and builds its own
engine), episodes per second, the summed wall time of the episodes themselves, and the ratio
of episodes per second (2 workers / 1 worker) next to the issue's target for that count (1.4x
for 48 episodes, 1.7x for 192), and the load average before each count. Prints figures only;
nothing is asserted.

    .venv/bin/python benchmarks/run_workers.py [--preset sorting.SortAll] [--episodes 48 192]
                                               [--slots 1] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKERS = (1, 2)


def run_once(preset: str, episodes: int, slots: int, workers: int, out: Path) -> tuple[float, dict]:
    """Wall seconds of one ``magma run`` and the totals of its summary (with ``cpu_s``: the
    CPU seconds of the command and its workers)."""
    name = f"bench-w{workers}"
    command = [
        sys.executable, "-m", "magma_core.cli", "run", preset, "--agent", "trace",
        "--episodes", str(episodes), "--slots", str(slots), "--workers", str(workers),
        "--out", str(out), "--name", name,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"magma run failed (workers={workers}):\n{proc.stdout}\n{proc.stderr}")
    totals = json.loads((out / f"{name}.summary.json").read_text())["totals"]
    return wall, {**totals, "cpu_s": cpu_s}


TARGETS = {48: 1.4, 192: 1.7}


def measure(preset: str, episodes: int, slots: int, rounds: int) -> None:
    """Run and print one episode count."""
    walls: dict[int, list[float]] = {w: [] for w in WORKERS}
    episode_s: dict[int, list[float]] = {w: [] for w in WORKERS}
    successes: dict[int, list[int]] = {w: [] for w in WORKERS}
    cpu: dict[int, list[float]] = {w: [] for w in WORKERS}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for workers in WORKERS:
            with tempfile.TemporaryDirectory() as tmp:
                wall, totals = run_once(preset, episodes, slots, workers, Path(tmp))
            walls[workers].append(wall)
            episode_s[workers].append(totals["wall_s"])
            successes[workers].append(totals["success"])
            cpu[workers].append(totals["cpu_s"])

    print(f"{preset}, {episodes} episodes, {slots} slot(s) per worker, trace agent, "
          f"{rounds} round(s), {os.cpu_count()} CPU cores, load average before: {load:.1f}, "
          f"after: {os.getloadavg()[0]:.1f}")
    print(f"{'workers':>7}  {'wall s':>7}  {'CPU s':>7}  {'episodes/s':>10}  {'episode s (sum)':>15}  success")
    rate = {}
    for workers in WORKERS:
        wall = statistics.median(walls[workers])
        rate[workers] = episodes / wall
        print(f"{workers:>7}  {wall:>7.2f}  {statistics.median(cpu[workers]):>7.2f}  {rate[workers]:>10.2f}  "
              f"{statistics.median(episode_s[workers]):>15.2f}  "
              f"{min(successes[workers])}/{episodes}")
    target = TARGETS.get(episodes)
    print(f"episodes/s ratio, 2 workers / 1 worker: {rate[2] / rate[1]:.2f}"
          + (f"  (target >= {target})" if target else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="sorting.SortAll")
    parser.add_argument("--episodes", type=int, nargs="+", default=[48, 192])
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.preset = [1], "cube.PickPlace"
    for episodes in args.episodes:
        measure(args.preset, episodes, args.slots, args.rounds)


if __name__ == "__main__":
    main()
