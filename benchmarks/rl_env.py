"""The trainer environment's throughput against ``magma run``, with the same scripted policy.

For each group size G (1, 4, 8) the same work runs twice, side by side in one process:

- ``magma run`` (:func:`magma_core.runs.run`): the trace agent, ``E`` episodes in G slots;
- the environment (:class:`magma_core.rl.TrainingEnv` with G slots): ``E / G`` groups of G
  rollouts, each rollout stepped with the same reference decisions as assistant messages
  (``Rollout.message_for``), all of a group's steps in one ``Group.step``.

Both store every episode. Timed from the first episode's start to the last one's end (engine
start-up excluded on both sides). Prints decisions per second of each, their ratio (target
>= 0.9), rollouts per second, the environment's overhead per step, and the start digest of
every rollout of one group of 8 (they must all be equal). Figures only; nothing is asserted.

    .venv/bin/python benchmarks/rl_env.py [--preset cube.PickPlace] [--episodes 16]
        [--groups 1 4 8] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from magma_core.rl import TaskSource, TrainingEnv
from magma_core.runs import RunSpec, run


def time_run(preset: str, episodes: int, slots: int, out: Path) -> tuple[float, int]:
    """(seconds from the first episode's start to the last one's end, decisions)."""
    marks: dict[str, float] = {}
    decisions = 0

    def listener(event: str, episode: object, payload: object) -> None:
        nonlocal decisions
        if event == "start":
            marks.setdefault("start", time.perf_counter())
        elif event == "step":
            decisions += 1
        elif event == "end":
            marks["end"] = time.perf_counter()

    result = run(RunSpec(preset, agent="trace", episodes=episodes, slots=slots, out=out,
                         name=f"run-{slots}", backend="cpu"), listener)
    assert all(s.status == "success" for s in result.summaries), "the trace agent must succeed"
    return marks["end"] - marks["start"], decisions


def time_env(preset: str, episodes: int, size: int, out: Path) -> tuple[float, int, list[str]]:
    """(seconds, decisions, digests of the first group) for E / G groups of G rollouts."""
    source = TaskSource.target(preset, seeds=[0])
    decisions, digests = 0, []
    with TrainingEnv(source, slots=size, out=out, name=f"rl-{size}", backend="cpu") as env:
        trace = source[0].task.perfect_trace().decisions()
        started = time.perf_counter()
        for g in range(max(1, episodes // size)):
            group = env.group(0, size=size)
            observations = group.reset()
            if g == 0:
                digests = [o.digest for o in observations]
            for decision in trace:
                if group.done:
                    break
                messages = [None if r.done else r.message_for(decision) for r in group.rollouts]
                group.step(messages)
                decisions += sum(m is not None for m in messages)
            assert all(r.record["status"] == "success" for r in group.rollouts)
        return time.perf_counter() - started, decisions, digests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cube.PickPlace")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--smoke", action="store_true", help="a tiny setting (CI): 2 episodes, G 1 and 2")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.groups = 2, [1, 2]
    print(f"preset {args.preset}, {args.episodes} episodes per setting, trace policy, cpu")
    print(f"{'G':>3} {'run dec/s':>10} {'env dec/s':>10} {'ratio':>6} {'env rollouts/s':>15} {'overhead/step':>14}")
    digests: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.groups:
            episodes = max(size, args.episodes // size * size)
            run_s, run_dec = time_run(args.preset, episodes, size, Path(tmp) / f"run{size}")
            env_s, env_dec, first = time_env(args.preset, episodes, size, Path(tmp) / f"env{size}")
            digests = first if len(first) >= len(digests) else digests
            run_rate, env_rate = run_dec / run_s, env_dec / env_s
            overhead_ms = (env_s / env_dec - run_s / run_dec) * 1000
            print(f"{size:>3} {run_rate:>10.1f} {env_rate:>10.1f} {env_rate / run_rate:>6.2f} "
                  f"{episodes / env_s:>15.2f} {overhead_ms:>+12.2f}ms")
    print(f"start digests of one group of {len(digests)}:")
    for i, digest in enumerate(digests):
        print(f"  rollout {i}: {digest[:16]}")
    print(f"identical: {len(set(digests)) == 1}")


if __name__ == "__main__":
    main()
