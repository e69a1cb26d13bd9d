"""What recording the world after each decision costs, and what a replay and a video cost.

Runs ``--episodes`` episodes of a preset with the trace agent into a temporary store, then
prints: the time ``world_state`` takes per decision (median of repeated reads on the live
simulator), the stored size of the world states per decision (zlib JSON in
``episode_worlds``) next to the episode record's size, and the time to render one episode's
video. Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/world_states.py [--preset sorting.SortAll] [--episodes 4]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from magma_core.agents import TraceAgent
from magma_core.runs.loop import RunLoop
from magma_core.runs.videos import write_episode_video
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.world import world_state
from magma_core.store import RunStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="sorting.SortAll")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.episodes = 1
    task = load_preset(args.preset)()
    with tempfile.TemporaryDirectory() as folder, Executor(task, num_slots=1, seed=0) as executor:
        store = RunStore(Path(folder) / "magma.db")
        store.open_run("bench", args.preset, {"episodes": args.episodes})
        RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "bench",
                episodes=args.episodes, seed=0).run()
        reads = []
        for _ in range(200):
            start = time.perf_counter()
            world_state(executor.sim, 0)
            reads.append(time.perf_counter() - start)
        conn = sqlite3.connect(Path(folder) / "magma.db")
        worlds, records, decisions = conn.execute(
            "SELECT SUM(length(w.states)), SUM(length(e.record)), SUM(e.decisions) "
            "FROM episode_worlds w JOIN episodes e USING (run_name, episode)"
        ).fetchone()
        conn.close()
        store.close()
        start = time.perf_counter()
        write_episode_video(Path(folder), "bench", 0)
        video_s = time.perf_counter() - start
    print(f"preset {args.preset}, {args.episodes} episodes, {decisions} decisions")
    print(f"world_state read: median {statistics.median(reads) * 1e3:.2f} ms per decision")
    print(f"stored world states: {worlds / (decisions + args.episodes):.0f} bytes per state "
          f"({worlds} bytes in all; episode records {records} bytes)")
    print(f"video of episode 0: {video_s:.1f} s")


if __name__ == "__main__":
    main()
