"""What the engine costs on top of stepping the same trajectories directly on ``SimBatch``.

One pick-and-place episode (pick the cube, place it on zone A) runs two ways on the same
``SimBatch``, alternating rounds so machine noise hits both alike:

* engine: ``Executor.reset_slot`` + two ``submit`` calls (tools, error hooks, motion,
  verifiers, state updates, actor protection, stage verification, views, records);
* direct: ``SimBatch.reset`` + the same two trajectories (computed from the same
  observation with the same code) through ``MotionRunner.run``.

Prints the median wall time per episode of each, their ratio (engine / direct; target:
within 10%, i.e. <= 1.10) and the control steps per episode, which must be equal. Prints
figures only; nothing is asserted.

    .venv/bin/python benchmarks/engine_overhead.py [--rounds 15] [--slots 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
from magma_core.simulation.data_structures import (
    Decision,
    Log,
    Observation,
    Pose,
    SituationInit,
    StageInput,
    ToolCall,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.envs import SimBatch
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import At
from magma_core.simulation.motion import MotionPlan, MotionRunner
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool

ENV_ID = "MagmaCube-v1"
DOWN = (0.0, 1.0, 0.0, 0.0)


def pick_poses(extra: dict, slot: int) -> list:
    x, y, z = (float(v) for v in extra["cube"][slot, :3])
    return [Pose((x, y, z + 0.1), DOWN), "OPEN", Pose((x, y, z), DOWN), "CLOSE", Pose((x, y, 0.15), DOWN)]


def place_poses(extra: dict, slot: int, area: str) -> list:
    x, y, _ = (float(v) for v in extra[area][slot, :3])
    return [Pose((x, y, 0.15), DOWN), Pose((x, y, 0.045), DOWN), "OPEN", Pose((x, y, 0.15), DOWN)]


class BenchTools(BaseToolsAPI):
    @register_tool(description="Pick the cube.", params_spec={"object": {"description": "o", "type": str}})
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        name = params["object"]

        def verifier(raw: dict) -> ToolResult:
            ok = float(raw["extra"][name][env_id, 2]) > 0.06
            return ToolResult(ok, "picked" if ok else "missed", logs=Log(f"picked {name}"))

        return ToolExecution(pick_poses(obs.maniskill_obs["extra"], env_id), verifier, allowed_moving_actors=[name])

    @register_tool(description="Place on an area.", params_spec={"area": {"description": "a", "type": str}})
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        area = params["area"]

        def verifier(raw: dict) -> ToolResult:
            extra = raw["extra"]
            d = float(torch.linalg.vector_norm(extra["cube"][env_id, :2] - extra[area][env_id, :2]))
            return ToolResult(d < 0.06, f"placed on {area}", logs=Log(f"placed on {area}"))

        return ToolExecution(place_poses(obs.maniskill_obs["extra"], env_id, area), verifier, allowed_moving_actors=["cube"])


class PlaceStage(BaseTaskStage):
    target_tool_calls = 2
    max_tool_calls = 4

    def __init__(self) -> None:
        super().__init__(
            [At("cube", "zone_a", thresh=0.05)],
            "The cube is on zone A.",
            StageInput(UserInstruction("Put the cube on zone A."), False),
        )


def make_task() -> BaseTask:
    return BaseTask(
        maniskill_env_id=ENV_ID,
        Tools_cls=BenchTools,
        situation_init=SituationInit({"objects": ["cube"], "areas": ["zone_a"]}),
        stages=[PlaceStage()],
        name="PickPlaceBench",
    )


PICK = Decision(tool_calls=[ToolCall("pick", {"object": "cube"})])
PLACE = Decision(tool_calls=[ToolCall("place", {"area": "zone_a"})])


def engine_episode(executor: Executor, seed: int, slots: int) -> tuple[float, int, bool]:
    start = time.perf_counter()
    for slot in range(slots):
        executor.reset_slot(slot, seed + slot)
    executor.submit({s: PICK for s in range(slots)})
    out = executor.submit({s: PLACE for s in range(slots)})
    elapsed = time.perf_counter() - start
    ok = all(o.status == "success" for o in out.values())
    return elapsed, executor.record(0).sim_steps, ok


def direct_episode(sim: SimBatch, runner: MotionRunner, seed: int, slots: int) -> tuple[float, int, bool]:
    start = time.perf_counter()
    for slot in range(slots):
        sim.reset(seed=[seed + slot], slots=[slot])
    steps = 0
    for poses in (pick_poses, lambda e, s: place_poses(e, s, "zone_a")):
        extra = sim.observe()["extra"]
        results = runner.run([MotionPlan(s, poses(extra, s)) for s in range(slots)]).results
        steps += max(r.steps for r in results)
    extra = sim.observe()["extra"]
    elapsed = time.perf_counter() - start
    d = torch.linalg.vector_norm(extra["cube"][:, :2] - extra["zone_a"][:, :2], dim=1)
    return elapsed, steps, bool((d < 0.05).all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.rounds = 1
    torch.set_num_threads(1)

    sim = SimBatch(ENV_ID, args.slots, seed=0)
    runner = MotionRunner(sim)
    executor = Executor(make_task(), args.slots, sim=sim)
    engine_episode(executor, 0, args.slots)  # warm up both paths
    direct_episode(sim, runner, 0, args.slots)

    engine_t, direct_t, steps, failures = [], [], [], 0
    for round_ in range(args.rounds):
        seed = 100 + round_
        order = ("engine", "direct") if round_ % 2 == 0 else ("direct", "engine")
        per_round = {}
        for which in order:
            if which == "engine":
                t, per_round[which], ok = engine_episode(executor, seed, args.slots)
                engine_t.append(t)
            else:
                t, per_round[which], ok = direct_episode(sim, runner, seed, args.slots)
                direct_t.append(t)
            failures += not ok
        steps.append((per_round["engine"], per_round["direct"]))
    sim.close()

    engine_ms = statistics.median(engine_t) * 1e3
    direct_ms = statistics.median(direct_t) * 1e3
    same = all(e == d for e, d in steps)
    mean_steps = statistics.mean(e for e, _ in steps)
    print(f"pick-and-place episode, {args.slots} slot(s), {args.rounds} rounds (seeds 100..), median wall time")
    print(f"  engine (Executor: reset_slot + 2 submits):   {engine_ms:7.1f} ms")
    print(f"  direct (SimBatch.reset + 2 MotionRunner.run): {direct_ms:6.1f} ms")
    print(f"  ratio engine / direct: {engine_ms / direct_ms:.3f}   (target <= 1.10)")
    print(f"  control steps per episode: {mean_steps:.1f} on average, identical in every round: {same}")
    print(f"  failed episodes: {failures} of {2 * args.rounds}")


if __name__ == "__main__":
    main()
