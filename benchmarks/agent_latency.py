"""Episodes per minute with a slow, variable agent: the lockstep schedule against in-flight slots.

A loopback agent server (real HTTP, protocol 2.0) answers with the preset's reference trace
after a random delay, log-normal with the given mean and sigma. For each slot count the same
episodes run three times through ``magma_core.runs.run``: with the trace agent in-process (no
delay: the simulator's time), with the server and ``Pacing(lockstep=True)`` (every slot waits
for the slowest answer) and with the server and in-flight slots (the default). Prints episodes
per minute of each and the ideal bound, ``episodes / (sum of agent delays / slots + simulator
time)``, and the two ratios the issue targets (in-flight / ideal >= 0.85, in-flight / lockstep
>= 2 at 32 slots with sigma 0.8). Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/agent_latency.py [--preset cube.PickPlace] [--slots 8 32]
        [--episodes-per-slot 6] [--mean 2.0] [--sigma 0.8] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from magma_core.agents import TraceAgent
from magma_core.agents.loopback import LoopbackAgentServer, lognormal_delay
from magma_core.runs import Pacing, RunSpec, run
from magma_core.runs.assembly import load_task


def timed_run(spec: RunSpec) -> float:
    """Wall seconds of one run; exits if any episode did not succeed."""
    started = time.perf_counter()
    result = run(spec)
    wall = time.perf_counter() - started
    bad = [s for s in result.summaries if s.status != "success"]
    if result.failures or bad or len(result.summaries) != spec.episodes:
        sys.exit(f"run {spec.run_name} failed: {result.failures} {[(s.episode, s.status) for s in bad]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cube.PickPlace")
    parser.add_argument("--slots", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--episodes-per-slot", type=int, default=6)
    parser.add_argument("--mean", type=float, default=2.0, help="mean agent delay, seconds")
    parser.add_argument("--sigma", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.slots, args.episodes_per_slot, args.mean, args.sigma = [2], 1, 0.01, 0.1

    trace = load_task(args.preset).perfect_trace()
    print(f"{args.preset}, agent delay log-normal mean {args.mean:g} s sigma {args.sigma:g}, "
          f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'slots':>5} {'episodes':>8} {'sim s':>7} {'delay sum s':>11} | {'episodes/min':>12}: "
          f"{'lockstep':>8} {'inflight':>8} {'ideal':>8} | {'inflight/ideal':>14} {'inflight/lockstep':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        for slots in args.slots:
            episodes = slots * args.episodes_per_slot
            common = dict(target=args.preset, episodes=episodes, slots=slots, seed=args.seed,
                          out=Path(tmp))
            sim_s = timed_run(RunSpec(agent="trace", name=f"sim-{slots}", **common))
            rates: dict[str, float] = {}
            delays: dict[str, float] = {}
            for schedule in ("lockstep", "inflight"):
                server = LoopbackAgentServer(
                    TraceAgent(trace), delay=lognormal_delay(args.mean, args.sigma, args.seed))
                with server:
                    pacing = Pacing(lockstep=schedule == "lockstep")
                    wall = timed_run(RunSpec(agent=server.url, name=f"{schedule}-{slots}",
                                             pacing=pacing, **common))
                rates[schedule] = episodes / wall * 60
                delays[schedule] = sum(server.delays)
            # the ideal bound of the in-flight run, from the delays its own requests drew
            ideal = episodes / (delays["inflight"] / slots + sim_s) * 60
            print(f"{slots:>5} {episodes:>8} {sim_s:>7.1f} {delays['inflight']:>11.1f} | {'':>12}  "
                  f"{rates['lockstep']:>8.1f} {rates['inflight']:>8.1f} {ideal:>8.1f} | "
                  f"{rates['inflight'] / ideal:>14.2f} {rates['inflight'] / rates['lockstep']:>17.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
