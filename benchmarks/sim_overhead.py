"""What SimBatch costs on top of a raw ManiSkill env, and what a slot snapshot costs.

Runs the same action stream (``pd_joint_pos`` targets around the Panda's rest pose)
through ``SimBatch(num_slots=1).step`` and through a raw ``gym.make`` env, alternating
rounds (and their order) so machine noise hits both alike, and prints steps per second and their ratio
(SimBatch / raw). Then prints the median cost of ``save_slot`` and ``restore_slot``, and,
for information, the motion path (``step_physics``), a 3-slot batch, and what a fresh PhysX
scene per episode costs (the default, for reproducible worlds) against an episode. Prints figures
only; nothing is asserted.

    .venv/bin/python benchmarks/sim_overhead.py [--steps 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import torch

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
from magma_core.simulation.envs import SimBatch
from magma_core.simulation.envs.headless import backend_kwargs

ENV_ID = "MagmaCube-v1"
REST_ARM = [0.0, 0.3927, 0.0, -1.9635, 0.0, 2.3562, 0.7854]


def action_stream(steps: int, num_slots: int, seed: int = 0) -> torch.Tensor:
    """``[steps, num_slots, 8]`` joint targets near rest, gripper commands ±1."""
    gen = torch.Generator().manual_seed(seed)
    arm = torch.tensor(REST_ARM) + 0.15 * torch.randn(steps, num_slots, 7, generator=gen)
    grip = torch.where(torch.rand(steps, num_slots, 1, generator=gen) < 0.5, -1.0, 1.0)
    return torch.cat([arm, grip], dim=-1)


def rate(step: Callable[[torch.Tensor], object], actions: torch.Tensor) -> float:
    start = time.perf_counter()
    for action in actions:
        step(action)
    return len(actions) / (time.perf_counter() - start)


def median_us(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=300, help="save/restore samples")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.rounds, args.repeats = 10, 1, 5
    torch.set_num_threads(1)

    batch = SimBatch(ENV_ID, 1, seed=0, backend="cpu")
    raw = gym.make(ENV_ID, num_envs=1, **batch.env_options)  # same options as the batch
    actions = action_stream(args.steps, 1)

    batch_rates, raw_rates, unwrapped_rates, physics_rates = [], [], [], []
    for round_ in range(args.rounds):
        for which in ("batch", "raw") if round_ % 2 == 0 else ("raw", "batch"):
            if which == "batch":
                batch.reset(seed=0)
                batch_rates.append(rate(batch.step, actions))
            else:
                raw.reset(seed=0)
                raw_rates.append(rate(raw.step, actions))
        raw.reset(seed=0)
        unwrapped_rates.append(rate(raw.unwrapped.step, actions))
        batch.reset(seed=0)
        physics_rates.append(rate(batch.step_physics, actions))

    b, r = statistics.median(batch_rates), statistics.median(raw_rates)
    u = statistics.median(unwrapped_rates)
    print(
        f"env {ENV_ID}, control {batch.control_mode}, obs {batch.env_options['obs_mode']}, "
        f"backend {backend_kwargs()}, {args.rounds} rounds x {args.steps} steps (medians)"
    )
    print(f"  SimBatch(1).step          {b:8.1f} steps/s")
    print(f"  raw gym.make env.step     {r:8.1f} steps/s")
    paired = statistics.median(x / y for x, y in zip(batch_rates, raw_rates, strict=True))
    print(f"  ratio SimBatch / raw      {b / r:8.3f} (median of per-round ratios {paired:.3f})")
    print(f"  (raw env.unwrapped.step   {u:8.1f} steps/s, ratio {b / u:.3f})")
    print(
        f"  SimBatch(1).step_physics  {statistics.median(physics_rates):8.1f} steps/s "
        "(motion path: no evaluation/observation)"
    )

    batch.reset(seed=0)
    for action in actions[:20]:
        batch.step(action)
    snapshot = batch.save_slot(0)
    save = median_us(lambda: batch.save_slot(0), args.repeats)
    restore = median_us(lambda: batch.restore_slot(0, snapshot), args.repeats)
    print(f"  save_slot    median {save:7.1f} us")
    print(f"  restore_slot median {restore:7.1f} us")
    raw.close()
    batch.close()

    batch3 = SimBatch(ENV_ID, 3, seed=0, backend="cpu")
    actions3 = action_stream(args.steps // 3, 3)
    step3 = rate(batch3.step, actions3) * 3
    state_cost = median_us(batch3.get_state, args.repeats // 3)
    print(
        f"  SimBatch(3).step          {step3:8.1f} slot-steps/s; get_state median {state_cost:.1f} us"
    )
    batch3.close()
    fresh_scene_cost(args.rounds)


def fresh_scene_cost(rounds: int) -> None:
    """What starting an episode in a fresh PhysX scene costs (``SimBatch(fresh_scene=True)``,
    the default), next to a plain reset and to one episode of the built-in presets."""
    from magma_core.runs import RunSpec, run

    batch = SimBatch(ENV_ID, 1, seed=0, backend="cpu")
    env = batch.envs[0]
    times: dict[bool, list[float]] = {False: [], True: []}
    for i in range(max(3, rounds)):
        for fresh in (False, True) if i % 2 == 0 else (True, False):
            start = time.perf_counter()
            env.reset(seed=i, options={"reconfigure": fresh})
            times[fresh].append(time.perf_counter() - start)
    batch.close()
    plain, fresh = (statistics.median(times[k]) * 1e3 for k in (False, True))
    print(f"  reset {plain:.1f} ms; reset in a fresh PhysX scene {fresh:.1f} ms "
          f"(+{fresh - plain:.1f} ms per episode)")
    with tempfile.TemporaryDirectory() as tmp:
        for preset in ("cube.PickPlace", "sorting.SortAll"):
            result = run(RunSpec(target=preset, episodes=2, slots=1, out=Path(tmp), name=preset,
                                 backend="cpu"))
            wall = statistics.median(s.wall_s for s in result.summaries) * 1e3
            print(f"  {preset} episode {wall:.0f} ms: the fresh scene is "
                  f"{(fresh - plain) / wall:.1%} of it")


if __name__ == "__main__":
    main()
