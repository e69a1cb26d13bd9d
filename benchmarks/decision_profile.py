"""Where one decision's time goes: a profile of the engine's pick-and-place episodes.

Runs ``--episodes`` episodes of ``engine_overhead``'s pick-and-place task (two decisions:
pick, place) through ``Executor`` under cProfile and prints, per part of a decision, its
share of the engine's time (inclusive times of the functions named; parts can nest, e.g.
PhysX within control steps): tool preparation, IK, control steps (controller actions +
PhysX substeps), PhysX alone, observations, state reads/writes, verification, records
(world states), views. Then the motion path's shares (PhysX / control steps / motion), the
figures the issue targets (PhysX >= 70% of motion time). cProfile inflates every Python
call, so the same episodes then run without it, timed by plain wall clocks around
``MotionRunner.run`` and each env's ``scene.step`` (PhysX substeps), and the unprofiled share is
printed too. Prints figures only.

    .venv/bin/python benchmarks/decision_profile.py [--episodes 10] [--slots 1]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_overhead import ENV_ID, engine_episode, make_task  # noqa: E402
from magma_core.simulation.envs import SimBatch  # noqa: E402
from magma_core.simulation.executor import Executor  # noqa: E402

#: part -> (file suffix, function name) pairs whose inclusive times make it up.
PARTS: dict[str, list[tuple[str, str]]] = {
    "whole submit": [("executor/executor.py", "submit")],
    "tool preparation": [("executor/batch.py", "_prepare")],
    "motion (MotionRunner.run)": [("motion/runner.py", "run")],
    "IK (plan compile)": [("motion/runner.py", "_compile")],
    "control steps (step_physics)": [("envs/sim_batch.py", "step_physics")],
    "PhysX substeps": [("<built-in>", "step")],
    "controller set_action": [("agents/base_agent.py", "set_action")],
    "joint reads (robot_qpos)": [("envs/sim_batch.py", "robot_qpos")],
    "observations (observe)": [("envs/sim_batch.py", "observe")],
    "state reads (get_state/save_slot)": [("envs/sim_batch.py", "get_state"),
                                          ("envs/sim_batch.py", "save_slot")],
    "state writes (set_state)": [("envs/sim_batch.py", "set_state")],
    "verification": [("executor/batch.py", "_verify"), ("executor/verification.py", "verify_stage")],
    "records (world states)": [("executor/world.py", "world_state")],
    "views": [("executor/views.py", "build_view")],
}


def inclusive(stats: pstats.Stats, suffix: str, name: str) -> float:
    total = 0.0
    for (filename, _, function), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if function == name and (filename.endswith(suffix) or suffix == filename):
            if suffix == "<built-in>" and "sapien" not in repr(function):
                pass
            total += cumtime
    return total


def physx_time(stats: pstats.Stats) -> float:
    """Inclusive time of SAPIEN's PhysX ``step`` (a built-in method)."""
    total = 0.0
    for (filename, _, function), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if filename == "~" and "step" in function and ("Physx" in function or "sapien" in function):
            total += cumtime
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.episodes = 1
    torch.set_num_threads(1)
    sim = SimBatch(ENV_ID, args.slots, seed=0, backend="cpu")
    executor = Executor(make_task(), args.slots, sim=sim)
    engine_episode(executor, 0, args.slots)  # warm up
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for k in range(args.episodes):
        engine_episode(executor, 100 + k, args.slots)
    profile.disable()
    wall = time.perf_counter() - started
    unprofiled = timed_shares(executor, sim, args.episodes, args.slots)
    sim.close()
    stats = pstats.Stats(profile)
    figures = {part: sum(inclusive(stats, s, n) for s, n in pairs) for part, pairs in PARTS.items()}
    figures["PhysX substeps"] = physx_time(stats)
    total = figures["whole submit"] or 1e-9
    decisions = 2 * args.episodes
    print(f"{args.episodes} pick-and-place episodes ({decisions} decisions per slot), {args.slots} "
          f"slot(s), {wall:.2f} s under the profiler; per decision, inclusive:")
    for part, seconds in figures.items():
        print(f"  {part:36s} {1e3 * seconds / decisions:8.1f} ms  {seconds / total:6.1%}")
    motion = figures["motion (MotionRunner.run)"] or 1e-9
    print(f"  PhysX / motion time: {figures['PhysX substeps'] / motion:.1%} (target >= 70%); "
          f"control steps / motion: {figures['control steps (step_physics)'] / motion:.1%}")
    physx, motion_s, submit_s = unprofiled
    print(f"  without the profiler: submit {1e3 * submit_s / decisions:.1f} ms per decision, motion "
          f"{1e3 * motion_s / decisions:.1f} ms, PhysX {1e3 * physx / decisions:.1f} ms; "
          f"PhysX / motion time: {physx / (motion_s or 1e-9):.1%}")


def timed_shares(executor: Executor, sim: SimBatch, episodes: int, slots: int) -> tuple[float, float, float]:
    """Seconds in PhysX substeps, in ``MotionRunner.run`` and in ``submit`` over ``episodes``
    unprofiled episodes (wall clocks around the calls; the clocks cost well under 1%)."""
    from magma_core.simulation.motion.runner import MotionRunner

    spent = {"physx": 0.0, "motion": 0.0, "submit": 0.0}

    def clocked(fn, key):
        def wrapper(*a, **k):
            start = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - start
        return wrapper

    from mani_skill.envs.scene import ManiSkillScene

    originals = MotionRunner.run, ManiSkillScene.step, executor.submit
    MotionRunner.run = clocked(originals[0], "motion")  # type: ignore[method-assign]
    ManiSkillScene.step = clocked(originals[1], "physx")  # type: ignore[method-assign]
    executor.submit = clocked(originals[2], "submit")  # type: ignore[method-assign]
    try:
        for k in range(episodes):
            engine_episode(executor, 100 + k, slots)
    finally:
        MotionRunner.run, ManiSkillScene.step = originals[:2]  # type: ignore[method-assign]
        del executor.submit  # the instance attribute: back to the method
    return spent["physx"], spent["motion"], spent["submit"]


if __name__ == "__main__":
    main()
