"""What procedural tasks cost: generating, freezing and randomizing tasks, and running them.

Prints, for ``sorting.LongSorting``: milliseconds per generated task, per JSON round trip
(spec to JSON and back) and per vocabulary drawn; then runs ``--episodes`` generated tasks,
randomized, with the trace agent through ``magma_core.runs.run`` and prints their outcome
and wall time. Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/procedural.py [--tasks 200] [--episodes 10] [--slots 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from magma_core.runs import RunSpec, run
from magma_core.simulation.randomizer import randomize_task
from magma_core.simulation.tasks import task_from_json, task_to_json
from magma_scenarios.sorting.definitions import LongSorting


def _ms_per(count: int, started: float) -> float:
    return 1000 * (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.episodes, args.slots = 3, 1, 1
    definition = LongSorting()
    started = time.perf_counter()
    tasks = [definition.generate(seed) for seed in range(args.tasks)]
    print(f"generate: {_ms_per(args.tasks, started):.2f} ms per task "
          f"({sum(len(t.stages) for t in tasks) / len(tasks):.1f} stages on average)")
    started = time.perf_counter()
    texts = [task_to_json(t) for t in tasks]
    rebuilt = [task_from_json(text) for text in texts]
    print(f"JSON round trip: {_ms_per(args.tasks, started):.2f} ms per task "
          f"({sum(map(len, texts)) / len(texts) / 1024:.1f} KiB each); identical: "
          f"{all(task_to_json(a) == b for a, b in zip(rebuilt, texts, strict=True))}")
    started = time.perf_counter()
    for seed, task in enumerate(tasks):
        randomize_task(task, seed)
    print(f"randomize: {_ms_per(args.tasks, started):.2f} ms per task")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        result = run(RunSpec("sorting.LongSorting", episodes=args.episodes, slots=args.slots,
                             randomized=True, out=out))
        wall = time.perf_counter() - started
    summaries = result.summaries
    stages = sum(s.stages_total for s in summaries)
    print(f"run {args.episodes} randomized tasks, trace agent, {args.slots} slots: "
          f"{sum(s.status == 'success' for s in summaries)}/{len(summaries)} succeeded, "
          f"{sum(s.optimal for s in summaries)}/{stages} stages OPTIMAL, {wall:.1f} s "
          f"({wall / args.episodes:.2f} s per task)")


if __name__ == "__main__":
    main()
