"""Throughput of ``magma gen`` with the noisy-trace agent at 4 and 8 slots, next to ``magma run``.

Prints, per configuration: candidates (nodes) per second, successful trajectories per hour,
and the share of wall time spent saving and restoring whole-slot snapshots (target < 10%);
and for ``magma run`` on the same task, with the same noisy-trace agent and with the trace
agent: decisions per second and successful episodes per hour. The last column compares each
gen row with ``magma run`` with the same agent at the same slots (the issue's target: >= 1.5).

gen runs twice per slot count: with ``K = 2`` continuations per stage's finishers (this
script's old setting) and with ``magma gen``'s default ``K = 10``. Per executed node gen costs
what a decision of ``magma run`` costs (the same engine; snapshots, restores and store writes
are a few percent of its wall time); its successes per node are the tree's shape: a small K
caps the successful leaves per tree (K continuations of the last stage, B candidates each),
and the nodes after the cap go to failing and parked branches.

``K = 2`` runs once more with ``--reuse-scenes`` (each slot keeps its PhysX scene across
candidates; by default each candidate is restored into a fresh scene, so that the trees are the
same bytes with any slot count): the ratio of the two wall times is the fresh scenes' cost.

``--task`` may be a preset or a definition (each tree, and each run episode, then runs its
seed's task); ``--randomized`` as for ``magma gen``/``magma run``.

    .venv/bin/python benchmarks/gen_throughput.py [--task sorting.SortAll] [--nodes 320] [--trees 2]
        [--noise 0.1] [--episodes-per-slot 4] [--randomized]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def gen_once(task_name: str, slots: int, nodes: int, noise: float, trees: int, folder: Path,
             randomized: bool = False, per_stage: int = 2, fresh: bool = True) -> dict:
    from magma_core.gen import GenerationStore, Generator, GenSettings
    from magma_core.gen.assembly import prepare_generation
    from magma_core.runs.assembly import open_executor

    parts = prepare_generation(task_name, f"noisy-trace:{noise}", trees=trees, randomized=randomized)
    executor = open_executor(parts.task, slots, 0, None, "cpu", fresh_scene=fresh)
    store = GenerationStore(folder / f"gen{slots}-{per_stage}-{fresh}.db")
    store.open_generation("bench", task_name, {})
    settings = GenSettings(branches=2, max_nodes=nodes, trees=trees, max_per_stage=per_stage)
    started = time.perf_counter()
    summary = Generator(parts.task, parts.agent, executor, store, "bench", settings, trees=parts.trees).run()
    wall = time.perf_counter() - started
    executor.close()
    store.close()
    snap = summary["snapshot_s"] + summary["restore_s"]
    reused = "" if fresh else ", reused"
    return {"what": f"gen K={per_stage}, {slots} slots{reused}", "agent": f"noisy-trace:{noise}", "wall_s": wall, "units": summary["candidates"],
            "per_s": summary["candidates"] / wall, "successes": summary["successes"],
            "per_hour": summary["successes"] / wall * 3600, "snapshot_share": snap / wall}


def run_once(task_name: str, slots: int, episodes: int, folder: Path, randomized: bool = False,
             agent: str = "trace") -> dict:
    from magma_core.runs import RunSpec, run

    first: list[float] = []

    def listener(event: str, episode: object, payload: object) -> None:
        if event == "start" and not first:
            first.append(time.perf_counter())  # the engine is up: time the episodes only

    result = run(RunSpec(task_name, agent=agent, episodes=episodes, slots=slots, out=folder,
                         name=f"run{slots}-{agent.replace(':', '_')}", backend="cpu", randomized=randomized),
                 listener=listener)
    wall = time.perf_counter() - first[0]
    decisions = sum(s.decisions for s in result.summaries)
    successes = sum(s.status == "success" for s in result.summaries)
    return {"what": f"run ({agent.split(':')[0]}), {slots} slots", "agent": agent, "wall_s": wall, "units": decisions,
            "per_s": decisions / wall, "successes": successes, "per_hour": successes / wall * 3600,
            "snapshot_share": 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task", default="sorting.SortAll")
    parser.add_argument("--nodes", type=int, default=320)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--episodes-per-slot", type=int, default=4, help="magma run's episodes")
    parser.add_argument("--randomized", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.nodes, args.trees, args.episodes_per_slot = 4, 1, 1
    noisy = f"noisy-trace:{args.noise}"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for slots in (1,) if args.smoke else (4, 8):
            episodes = slots * args.episodes_per_slot
            group = [gen_once(args.task, slots, args.nodes, args.noise, args.trees, Path(tmp),
                              args.randomized, per_stage=k) for k in ((2,) if args.smoke else (2, 10))]
            group.append(gen_once(args.task, slots, args.nodes, args.noise, args.trees, Path(tmp),
                                  args.randomized, per_stage=2, fresh=False))
            group += [run_once(args.task, slots, episodes, Path(tmp), args.randomized, agent=agent)
                      for agent in (noisy, "trace")]
            same = next(r for r in group if r["what"].startswith("run") and r["agent"] == noisy)
            for r in group:
                r["vs_run"] = r["per_hour"] / same["per_hour"] if same["per_hour"] else float("nan")
            fresh, reused = group[0], group[len(group) - 3]
            print(f"{slots} slots: fresh scenes / reused scenes, wall time: "
                  f"{fresh['wall_s'] / reused['wall_s']:.2f}x ({fresh['wall_s']:.1f} s / {reused['wall_s']:.1f} s)")
            rows += group
    print(f"task {args.task}{' randomized' if args.randomized else ''}, gen: {noisy}, B=2, "
          f"M={args.nodes}, T={args.trees}; run: {args.episodes_per_slot} episodes per slot")
    print(f"{'':26} {'wall s':>8} {'nodes|decisions':>16} {'per s':>8} {'successes':>10} "
          f"{'successes/h':>12} {'snapshot share':>15} {'/ run, same agent':>18}")
    for r in rows:
        print(f"{r['what']:26} {r['wall_s']:8.1f} {r['units']:16d} {r['per_s']:8.2f} {r['successes']:10d} "
              f"{r['per_hour']:12.0f} {r['snapshot_share']:15.1%} {r['vs_run']:18.2f}")


if __name__ == "__main__":
    main()
