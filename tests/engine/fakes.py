"""An in-memory stand-in for ``SimBatch`` and the motion layer: a kinematic cube world.

State layout as the real cube world: ``actors`` (cube, zone_a, zone_b: ``[N, 13]``),
``articulations`` (panda: tcp xyz + gripper command + held flag), ``magma_extra_state``
(``machine_on: [N]`` bool). Motion is kinematic: the TCP jumps to each pose, CLOSE grasps
the cube when the TCP is on it, OPEN drops it, a low move ending against the cube pushes
it, and a pose farther than ``REACH`` from the robot base is a planner error.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from magma_core.simulation.data_structures import Pose, ToolExecution
from magma_core.simulation.executor import MotionReport
from magma_core.simulation.state import assign_slot, clone_state, select_slot

BASE = (-0.615, 0.0, 0.0)
REACH = 0.9
ZONES = {"zone_a": (0.0, 0.15), "zone_b": (0.15, 0.05)}
HALF = 0.02
STEPS_PER_POSE = 10


class FakeSim:
    """N slots of the kinematic cube world (the subset of ``SimBatch`` the engine uses)."""

    robot_names = ["panda"]

    def __init__(self, num_slots: int = 1) -> None:
        self.num_slots = num_slots
        n = num_slots
        self.state: dict[str, Any] = {
            "actors": {name: torch.zeros(n, 13) for name in ("cube", "zone_a", "zone_b")},
            "articulations": {"panda": torch.zeros(n, 5)},
            "magma_extra_state": {"machine_on": torch.zeros(n, dtype=torch.bool)},
        }
        self.closed = False
        self.calls: list[str] = []
        self.reset(seed=0)

    # -- SimBatch API ------------------------------------------------------------------------
    def robots(self, slot: int = 0) -> dict[str, Any]:
        return {"panda": object()}

    def reset(self, seed: Any = None, slots: Iterable[int] | None = None) -> dict[str, Any]:
        idx = list(range(self.num_slots)) if slots is None else list(slots)
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in idx]
        else:
            seeds = list(seed)
        for slot, s in zip(idx, seeds, strict=True):
            rng = random.Random(s)
            actors = self.state["actors"]
            for name in actors:
                actors[name][slot] = 0.0
                actors[name][slot, 3] = 1.0
            actors["cube"][slot, :3] = torch.tensor(
                [rng.uniform(-0.02, 0.02), -0.1 + rng.uniform(-0.02, 0.02), HALF]
            )
            for name, (x, y) in ZONES.items():
                actors[name][slot, :3] = torch.tensor([x, y, 0.001])
            self.state["articulations"]["panda"][slot] = torch.tensor([0.0, 0.0, 0.2, 1.0, 0.0])
            self.state["magma_extra_state"]["machine_on"][slot] = False
        self.calls.append("reset")
        return self.observe()

    def get_state(self) -> dict[str, Any]:
        return clone_state(self.state)

    def set_state(self, state: Mapping[str, Any], slots: Iterable[int] | None = None) -> None:
        idx = list(range(self.num_slots)) if slots is None else [int(s) for s in slots]
        for slot in idx:
            assign_slot(self.state, slot, state, source_slot=slot)
        self.calls.append(f"set_state{idx}")

    def save_slot(self, slot: int) -> dict[str, Any]:
        return select_slot(self.state, slot)

    def restore_slot(self, slot: int, snapshot: Mapping[str, Any], *, seed: int | None = None) -> None:
        assign_slot(self.state, slot, snapshot, source_slot=0)
        self.calls.append(f"restore_slot{slot}")

    def observe(self) -> dict[str, Any]:
        actors = self.state["actors"]
        panda = self.state["articulations"]["panda"]
        tcp = torch.zeros(self.num_slots, 7)
        tcp[:, :3] = panda[:, :3]
        tcp[:, 4] = 1.0
        extra = {name: actors[name][:, :7].clone() for name in actors}
        extra["tcp"] = tcp
        extra["machine_on"] = self.state["magma_extra_state"]["machine_on"].clone()
        return {"extra": extra, "agent": {"qpos": panda.clone()}}

    def close(self) -> None:
        self.closed = True


class FakeMotion:
    """Kinematic motion on a ``FakeSim``."""

    def __init__(self, sim: FakeSim) -> None:
        self.sim = sim

    def run(self, plans: Mapping[int, Sequence[ToolExecution]]) -> MotionReport:
        report = MotionReport()
        longest = 0
        for slot, executions in plans.items():
            steps = 0
            for index, execution in enumerate(executions):
                reason = self._execute(slot, execution.poses)
                steps += STEPS_PER_POSE * len(execution.poses)
                if reason:
                    report.failures.setdefault(slot, {})[index] = reason
                    break
            longest = max(longest, steps)
        report.steps = longest
        return report

    # -- kinematics ------------------------------------------------------------------------------
    def _execute(self, slot: int, poses: Sequence[Any]) -> str | None:
        panda = self.sim.state["articulations"]["panda"]
        cube = self.sim.state["actors"]["cube"]
        for entry in poses:
            if entry == "OK":
                continue
            if entry == "CLOSE":
                panda[slot, 3] = -1.0
                near = torch.linalg.vector_norm(cube[slot, :3] - panda[slot, :3]) < 0.02
                panda[slot, 4] = 1.0 if near else 0.0
                continue
            if entry == "OPEN":
                panda[slot, 3] = 1.0
                if panda[slot, 4] > 0:
                    cube[slot, 2] = HALF
                panda[slot, 4] = 0.0
                continue
            assert isinstance(entry, Pose)
            target = torch.tensor(entry.p)
            if torch.linalg.vector_norm(target - torch.tensor(BASE)) > REACH:
                return f"pose {list(entry.p)} is unreachable"
            start = panda[slot, :3].clone()
            panda[slot, :3] = target
            if panda[slot, 4] > 0:
                cube[slot, :3] = target
            elif target[2] < 2 * HALF:
                self._push(slot, start, target)
        return None

    def _push(self, slot: int, start: torch.Tensor, end: torch.Tensor) -> None:
        cube = self.sim.state["actors"]["cube"]
        move = end[:2] - start[:2]
        length = float(torch.linalg.vector_norm(move))
        if length < 1e-6 or start[2] >= 2 * HALF:
            return
        direction = move / length
        rel = cube[slot, :2] - start[:2]
        along = float(rel @ direction)
        across = abs(float(rel[0] * direction[1] - rel[1] * direction[0]))
        if across < 2 * HALF and 0 <= along <= length + 2 * HALF:
            cube[slot, :2] = end[:2] + direction * 2 * HALF


class RecordingMotion:
    """Wraps a motion driver: records each run's plans and the cube right after it, and
    ``flaky[slot] = k`` reports the slot's first execution as a planner error on its next k
    runs, after the motion really ran (so the engine must undo it)."""

    def __init__(self, inner: Any, sim: Any) -> None:
        self.inner = inner
        self.sim = sim
        self.flaky: dict[int, int] = {}
        self.runs: list[dict[int, list[str]]] = []
        self.cube_after: list[torch.Tensor] = []  # cube xyz [N, 3] right after each run

    def run(self, plans: Mapping[int, Sequence[ToolExecution]]) -> MotionReport:
        self.runs.append({slot: [e.function_name or "?" for e in ex] for slot, ex in plans.items()})
        report = self.inner.run(plans)
        self.cube_after.append(self.sim.observe()["extra"]["cube"][:, :3].clone())
        for slot in plans:
            if self.flaky.get(slot, 0) > 0:
                self.flaky[slot] -= 1
                report.failures.setdefault(slot, {})[0] = "flaky planner"
        return report
