"""Throughput of ``magma gen`` with the noisy-trace agent at 4 and 8 slots, next to ``magma run``.

Prints, per configuration: candidates (nodes) per second, successful trajectories per hour,
and the share of wall time spent saving and restoring whole-slot snapshots (target < 10%);
and for ``magma run`` with the trace agent on the same task: decisions per second and
successful episodes per hour. ``--task`` may be a preset or a definition (each tree, and each
run episode, then runs its seed's task); ``--randomized`` as for ``magma gen``/``magma run``.

    .venv/bin/python benchmarks/gen_throughput.py [--task sorting.SortAll] [--nodes 320] [--trees 2]
        [--noise 0.1] [--randomized]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def gen_once(task_name: str, slots: int, nodes: int, noise: float, trees: int, folder: Path,
             randomized: bool = False) -> dict:
    from magma_core.gen import GenerationStore, Generator, GenSettings
    from magma_core.gen.assembly import prepare_generation
    from magma_core.runs.assembly import open_executor

    parts = prepare_generation(task_name, f"noisy-trace:{noise}", trees=trees, randomized=randomized)
    executor = open_executor(parts.task, slots, 0, None, "cpu")
    store = GenerationStore(folder / f"gen{slots}.db")
    store.open_generation("bench", task_name, {})
    settings = GenSettings(branches=2, max_nodes=nodes, trees=trees, max_per_stage=2)
    started = time.perf_counter()
    summary = Generator(parts.task, parts.agent, executor, store, "bench", settings, trees=parts.trees).run()
    wall = time.perf_counter() - started
    executor.close()
    store.close()
    snap = summary["snapshot_s"] + summary["restore_s"]
    return {"what": f"gen, {slots} slots", "wall_s": wall, "units": summary["candidates"],
            "per_s": summary["candidates"] / wall, "successes": summary["successes"],
            "per_hour": summary["successes"] / wall * 3600, "snapshot_share": snap / wall}


def run_once(task_name: str, slots: int, episodes: int, folder: Path, randomized: bool = False) -> dict:
    from magma_core.runs import RunSpec, run

    first: list[float] = []

    def listener(event: str, episode: object, payload: object) -> None:
        if event == "start" and not first:
            first.append(time.perf_counter())  # the engine is up: time the episodes only

    result = run(RunSpec(task_name, episodes=episodes, slots=slots, out=folder, name=f"run{slots}",
                         backend="cpu", randomized=randomized), listener=listener)
    wall = time.perf_counter() - first[0]
    decisions = sum(s.decisions for s in result.summaries)
    successes = sum(s.status == "success" for s in result.summaries)
    return {"what": f"run (trace), {slots} slots", "wall_s": wall, "units": decisions,
            "per_s": decisions / wall, "successes": successes, "per_hour": successes / wall * 3600,
            "snapshot_share": 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task", default="sorting.SortAll")
    parser.add_argument("--nodes", type=int, default=320)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--randomized", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.nodes, args.trees = 4, 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for slots in (1,) if args.smoke else (4, 8):
            rows.append(gen_once(args.task, slots, args.nodes, args.noise, args.trees, Path(tmp),
                                 args.randomized))
            rows.append(run_once(args.task, slots, slots, Path(tmp), args.randomized))
    print(f"task {args.task}{' randomized' if args.randomized else ''}, noisy-trace:{args.noise}, "
          f"B=2, K=2, M={args.nodes}, T={args.trees}; "
          "run: the trace agent, one episode per slot")
    print(f"{'':24} {'wall s':>8} {'nodes|decisions':>16} {'per s':>8} {'successes':>10} "
          f"{'successes/h':>12} {'snapshot share':>15}")
    for r in rows:
        print(f"{r['what']:24} {r['wall_s']:8.1f} {r['units']:16d} {r['per_s']:8.2f} {r['successes']:10d} "
              f"{r['per_hour']:12.0f} {r['snapshot_share']:15.1%}")


if __name__ == "__main__":
    main()
