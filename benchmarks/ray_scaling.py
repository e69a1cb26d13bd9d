"""Episodes per minute of ``magma run --ray`` with one engine actor against two.

Starts one local Ray cluster (``--cpus``, default 2) and runs the same workload (trace agent,
a fresh run store each time) through the front door with ``RayCluster(actors=A)`` for
A = 1 and 2, alternating rounds so machine noise hits both alike; a run without Ray (one
engine in this process) is printed beside them for reference. Per count it prints the median
wall time of the whole run, episodes per minute over it, the start-up (until the first
episode started: actors import the simulator and build their engines) and episodes per
minute after the start-up. Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/ray_scaling.py [--preset sorting.SortAll] [--episodes 24]
                                               [--slots 1] [--rounds 1] [--cpus 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from magma_core.runs import RunSpec, run
from magma_core.runs.ray_cluster import RayCluster, connect, disconnect

ACTORS = (1, 2)


def run_once(preset: str, episodes: int, slots: int, actors: int | None) -> dict[str, float]:
    """One run (``actors`` None: without Ray): wall seconds, start-up seconds, successes."""
    first_start: list[float] = []

    def listener(event: str, episode: Any, payload: Any) -> None:
        if event == "start" and not first_start:
            first_start.append(time.perf_counter())

    ray = None if actors is None else RayCluster(actors=actors)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = run(RunSpec(preset, agent="trace", episodes=episodes, slots=slots,
                             out=Path(tmp), name="bench", ray=ray), listener)
        wall = time.perf_counter() - started
    if result.failures:
        raise SystemExit(f"the run failed: {result.failures}")
    return {"wall": wall, "startup": first_start[0] - started,
            "success": sum(s.status == "success" for s in result.summaries)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="sorting.SortAll")
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        print("smoke: the arguments parse; the Ray cluster part is skipped")
        return

    load = os.getloadavg()[0]
    started = time.perf_counter()
    connect(RayCluster(num_cpus=args.cpus))
    print(f"local Ray cluster of {args.cpus} CPUs started in {time.perf_counter() - started:.1f} s")
    counts: tuple[int | None, ...] = (None, *ACTORS)
    figures: dict[int | None, list[dict[str, float]]] = {a: [] for a in counts}
    try:
        for _ in range(args.rounds):
            for actors in counts:
                figures[actors].append(run_once(args.preset, args.episodes, args.slots, actors))
    finally:
        disconnect()

    print(f"{args.preset}, {args.episodes} episodes, {args.slots} slot(s) per engine, trace "
          f"agent, {args.rounds} round(s), {os.cpu_count()} CPU cores, load average before: "
          f"{load:.1f}, after: {os.getloadavg()[0]:.1f}")
    print(f"{'engines':>14}  {'wall s':>7}  {'episodes/min':>12}  {'start-up s':>10}  "
          f"{'episodes/min after start-up':>27}  success")
    rate: dict[int | None, float] = {}
    for actors in counts:
        wall = statistics.median(f["wall"] for f in figures[actors])
        startup = statistics.median(f["startup"] for f in figures[actors])
        rate[actors] = 60 * args.episodes / wall
        steady = 60 * args.episodes / max(wall - startup, 1e-9)
        label = "1, no Ray" if actors is None else f"{actors} Ray actor(s)"
        print(f"{label:>14}  {wall:>7.1f}  {rate[actors]:>12.1f}  {startup:>10.1f}  "
              f"{steady:>27.1f}  {min(int(f['success']) for f in figures[actors])}/{args.episodes}")
    print(f"episodes/min ratio, 2 actors / 1 actor: {rate[2] / rate[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
