"""Kitchen episodes with the trace agent, side by side with sorting's: seconds and decisions
per episode, and the ratio kitchen / sorting (both on one CPU slot, same machine, same run).

    python benchmarks/kitchen_episodes.py              # 4 generated tasks per world
    python benchmarks/kitchen_episodes.py --episodes 10
    python benchmarks/kitchen_episodes.py --smoke      # one preset episode per world

Each world runs ``LongKitchen`` / ``LongSorting`` tasks (seeds 0, 1, ...) through the
procedural run loop with the slot trace agent; every stage must be OPTIMAL. The engine is
built before the clock starts.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from magma_core.agents import TraceAgent
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.judge import Verdict
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import load_definition, load_preset, register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import RunStore


class AnyAnswer:
    """A judge that accepts every answer (the trace's answers are the facts)."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        return Verdict(ok=True, reason="accepted")


def _episodes(target: str, episodes: int, preset: bool) -> tuple[float, float]:
    """(seconds, decisions) per episode of ``target``."""
    register_environments(target.split(".")[0])
    store = RunStore(Path(tempfile.mkdtemp()) / "magma.db")
    store.open_run("r", target, {})
    if preset:
        task = load_preset(target)()
        engine = Executor(task, num_slots=1, seed=0, judge=AnyAnswer())
        loop = RunLoop(task, TraceAgent(task.perfect_trace()), engine, store, "r",
                       episodes=episodes, seed=0)
    else:
        tasks = EpisodeTasks(load_definition(target)(), randomized=False)
        engine = PublicVocabularyExecutor(Executor(tasks.task(0), num_slots=1, seed=0,
                                                   judge=AnyAnswer()))
        loop = ProceduralRunLoop(tasks, None, SlotTraceAgent(), engine, store, "r",
                                 episodes=episodes, seed=0)
    with engine:
        start = time.perf_counter()
        summaries = loop.run()
        elapsed = time.perf_counter() - start
    bad = [s for s in summaries if s.status != "success" or s.optimal != s.stages_total]
    if bad:
        raise SystemExit(f"{target}: {len(bad)} episode(s) not OPTIMAL")
    decisions = sum(len(store.episode_record("r", s.episode)["steps"]) for s in summaries)
    return elapsed / len(summaries), decisions / len(summaries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="one preset episode per world")
    args = parser.parse_args()
    if args.smoke:
        pairs = [("kitchen", "kitchen.FetchFromDrawer"), ("sorting", "sorting.SortAll")]
        episodes, preset = 1, True
    else:
        pairs = [("kitchen", "kitchen.LongKitchen"), ("sorting", "sorting.LongSorting")]
        episodes, preset = args.episodes, False
    figures = {world: _episodes(target, episodes, preset) for world, target in pairs}
    print(f"{'world':<8} {'target':<24} {'s/episode':>10} {'decisions/episode':>18}")
    for (world, target), (seconds, decisions) in zip(pairs, figures.values(), strict=True):
        print(f"{world:<8} {target:<24} {seconds:>10.2f} {decisions:>18.1f}")
    (k, _), (s, _) = figures["kitchen"], figures["sorting"]
    print(f"kitchen / sorting time per episode: {k / s:.2f}x ({episodes} episode(s) each)")


if __name__ == "__main__":
    main()
