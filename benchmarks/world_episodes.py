"""Episode time and decisions per episode with the trace agent, per world's definition.

For each definition (default: the warehouse's and the button panel's) runs N generated
episodes with the slot trace agent on the CPU simulator and prints the wall time per
episode, decisions and tool calls per episode and whether every stage was OPTIMAL.

    python benchmarks/world_episodes.py [--episodes 8] [--randomized] [DEFINITION ...]
    python benchmarks/world_episodes.py --smoke      # one episode of each
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.scenarios import load_definition, register_environments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import RunStore

DEFAULT = ["warehouse.WarehouseOrders", "buttons.PanelTasks"]


def measure(name: str, episodes: int, randomized: bool) -> dict:
    """Run ``episodes`` episodes of definition ``name``; the figures."""
    register_environments(name.split(".")[0])
    tasks = EpisodeTasks(load_definition(name)(), randomized=randomized)
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "magma.db")
        store.open_run("r", name, {})
        engine = Executor(tasks.task(0), num_slots=1, seed=0)
        started = time.perf_counter()
        with PublicVocabularyExecutor(engine) as executor:
            summaries = ProceduralRunLoop(tasks, None, SlotTraceAgent(), executor, store, "r",
                                          episodes=episodes, seed=0).run()
        seconds = time.perf_counter() - started
        records = [store.episode_record("r", s.episode) for s in summaries]
    decisions = sum(len(r["steps"]) for r in records)
    calls = sum(len(step["calls"]) for r in records for step in r["steps"])
    optimal = all(s.status == "success" and s.optimal == s.stages_total for s in summaries)
    return {"definition": name, "episodes": episodes, "s_per_episode": seconds / episodes,
            "decisions_per_episode": decisions / episodes, "calls_per_episode": calls / episodes,
            "all_optimal": optimal}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("definitions", nargs="*", default=DEFAULT)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--randomized", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="one episode of each")
    args = parser.parse_args()
    episodes = 1 if args.smoke else args.episodes
    print(f"{'definition':28} {'episodes':>8} {'s/episode':>10} {'decisions':>10} {'calls':>7} optimal")
    for name in args.definitions:
        m = measure(name, episodes, args.randomized)
        print(f"{m['definition']:28} {m['episodes']:>8} {m['s_per_episode']:>10.2f} "
              f"{m['decisions_per_episode']:>10.1f} {m['calls_per_episode']:>7.1f} {m['all_optimal']}")


if __name__ == "__main__":
    main()
