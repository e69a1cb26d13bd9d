"""Run tool trajectories on a ``SimBatch``: poses → joint targets → ``pd_joint_pos`` actions.

How a trajectory becomes actions (measured against ``pd_ee_pose``; see the motion package
docstring):

* Pose: the TCP target (world frame) is split into straight-line sub-waypoints at most
  ``max_cartesian_step`` / ``max_rotation_step`` apart; inverse kinematics (SAPIEN's
  Pinocchio model, arm joints only) is solved once for each, when the plan starts, seeded
  by the previous solution. The joint targets are then fed one per control step (further
  split so no joint moves more than ``max_joint_step``), after which the arm gets up to
  ``settle_steps`` steps to come within ``reach_tolerance``. If the final pose has no IK
  solution, or the arm is still beyond ``fail_tolerance`` after settling, the plan fails
  with ``PLANNER_ERROR`` and its robot holds where it is.
* OPEN / CLOSE set the gripper command (+1 / -1) and hold the arm for ``gripper_steps``.
* OK adds no motion.

All plans of one call step together, one batched action per robot per control step; a
robot with nothing to do (finished, waiting for its execution group, or not in any plan)
holds its last command. On CPU a slot steps only while one of its own plans commands it
(other slots, and slots whose plans are over, are not stepped: a slot's world never depends
on what runs beside it); on GPU the whole batch steps and idle slots hold. At the start of every call the commands are re-read from the
simulator (arm: current joints; gripper: closed unless the fingers stand fully open), so a
restored snapshot is picked up correctly.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sapien
import torch

from magma_core.simulation.motion.kinematics import ArmKinematics, pose_interpolate, quat_angle
from magma_core.simulation.motion.plan import MotionConfig, MotionPlan, MotionResult, MotionRun

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.envs.sim_batch import SimBatch

__all__ = ["CONTROL_MODE", "MotionRunner", "run_trajectories"]

CONTROL_MODE = "pd_joint_pos"
_MAX_ITERATIONS = 100_000


@dataclass
class _Move:
    targets: np.ndarray  # [k, arm_dof] joint targets, one per control step
    goal: np.ndarray
    grip: float
    index: int  # position of the pose in the trajectory


@dataclass
class _Grip:
    goal: np.ndarray
    grip: float
    steps: int


class _PlanRun:
    """The execution state of one plan."""

    def __init__(self, plan: MotionPlan, robot: str, kin: ArmKinematics, config: MotionConfig):
        self.plan = plan
        self.robot = robot
        self.kin = kin
        self.config = config
        self.result = MotionResult(plan)
        self.deps: list[_PlanRun] = []
        self.started = False
        self.done = False
        self.segments: list[_Move | _Grip] = []
        self._seg = 0
        self._k = 0
        self._settle = 0

    def ready(self) -> bool:
        return all(dep.done for dep in self.deps)

    def start(self, arm_q: np.ndarray, grip: float, base: sapien.Pose) -> None:
        """Solve IK for the whole trajectory from the robot's current command."""
        self.started = True
        try:
            self.segments = self._compile(arm_q.astype(np.float64), grip, base)
        except _Unreachable as exc:
            self.result.fail(str(exc))
            self.done = True

    def _compile(self, arm_q: np.ndarray, grip: float, base: sapien.Pose) -> list[_Move | _Grip]:
        cfg, kin = self.config, self.kin
        base_inv = base.inv()
        tcp = kin.fk(arm_q)
        segments: list[_Move | _Grip] = []
        for index, entry in enumerate(self.plan.poses):
            if entry == "OK":
                continue
            if entry in ("OPEN", "CLOSE"):
                grip = 1.0 if entry == "OPEN" else -1.0
                segments.append(_Grip(arm_q, grip, cfg.gripper_steps))
                continue
            target = base_inv * sapien.Pose(p=list(entry.p), q=list(entry.q))
            if float(np.linalg.norm(np.asarray(target.p))) > cfg.max_reach:
                raise _Unreachable(
                    f"pose #{index} {entry.to_vector()} is unreachable for {self.robot} "
                    f"(more than {cfg.max_reach} m from its base)"
                )
            dist = float(np.linalg.norm(np.asarray(target.p) - np.asarray(tcp.p)))
            angle = quat_angle(np.asarray(tcp.q), np.asarray(target.q))
            n = max(
                1,
                math.ceil(dist / cfg.max_cartesian_step),
                math.ceil(angle / cfg.max_rotation_step),
            )
            solutions, seed = [], arm_q
            for k in range(1, n):
                q = kin.ik(pose_interpolate(tcp, target, k / n), seed)
                if q is not None:
                    solutions.append(q)
                    seed = q
            goal = kin.ik(target, seed)
            if goal is None:
                raise _Unreachable(
                    f"pose #{index} {entry.to_vector()} is unreachable for {self.robot} "
                    "(no inverse-kinematics solution)"
                )
            solutions.append(goal)
            segments.append(
                _Move(_joint_path(arm_q, solutions, cfg.max_joint_step), goal, grip, index)
            )
            arm_q, tcp = goal, target
        return segments

    def advance(self, arm_now: np.ndarray) -> tuple[np.ndarray, float] | None:
        """The next command given the measured arm joints; None when the plan is over."""
        cfg = self.config
        while self._seg < len(self.segments):
            seg = self.segments[self._seg]
            if isinstance(seg, _Grip):
                if self._k < seg.steps:
                    self._k += 1
                    return seg.goal, seg.grip
                self._next_segment()
                continue
            if self._k < len(seg.targets):
                self._k += 1
                return seg.targets[self._k - 1], seg.grip
            error = float(np.abs(arm_now - seg.goal).max())
            if error <= cfg.reach_tolerance:
                self._next_segment()
                continue
            if self._settle >= cfg.settle_steps:
                if error > cfg.fail_tolerance:
                    self.result.fail(
                        f"pose #{seg.index} not reached by {self.robot} within "
                        f"{cfg.settle_steps} settling steps (joint error {error:.3f} rad)"
                    )
                    self.done = True
                    return None
                self._next_segment()
                continue
            self._settle += 1
            return seg.goal, seg.grip
        self.done = True
        return None

    def _next_segment(self) -> None:
        self._seg += 1
        self._k = 0
        self._settle = 0


class _Unreachable(Exception):
    pass


def _joint_path(start: np.ndarray, waypoints: list[np.ndarray], max_step: float) -> np.ndarray:
    """Joint targets through ``waypoints``, no joint moving more than ``max_step`` per step."""
    targets, prev = [], start
    for q in waypoints:
        m = max(1, math.ceil(float(np.abs(q - prev).max()) / max_step))
        for j in range(1, m + 1):
            targets.append(prev + (q - prev) * (j / m))
        prev = q
    return np.asarray(targets)


class MotionRunner:
    """Executes :class:`MotionPlan` batches on one ``SimBatch`` (see the module docstring).

    The batch must run the ``pd_joint_pos`` controller (``DefaultEnv``'s default).
    """

    def __init__(self, sim_batch: SimBatch, config: MotionConfig | None = None) -> None:
        if sim_batch.control_mode != CONTROL_MODE:
            raise ValueError(
                f"the motion layer drives {CONTROL_MODE!r}; this SimBatch runs "
                f"{sim_batch.control_mode!r} (pass env_options={{'control_mode': '{CONTROL_MODE}'}})"
            )
        self.sim = sim_batch
        self.config = config or MotionConfig()
        self.kinematics = {
            name: ArmKinematics(agent) for name, agent in sim_batch.robots(0).items()
        }

    def run(self, plans: Sequence[MotionPlan], config: MotionConfig | None = None) -> MotionRun:
        """Execute ``plans`` (in call order) until all are done: one result per plan, and the
        control steps taken."""
        config = config or self.config
        sim = self.sim
        runs = [
            _PlanRun(
                plan,
                sim.robot_name(plan.robot),
                self.kinematics[sim.robot_name(plan.robot)],
                config,
            )
            for plan in plans
        ]
        for run in runs:
            if not 0 <= run.plan.slot < sim.num_slots:
                raise IndexError(f"slot {run.plan.slot} out of range for {sim.num_slots} slots")
        _link_dependencies(runs)
        if not runs:
            return MotionRun()
        taken = 0
        slot_steps = {slot: 0 for slot in sorted({run.plan.slot for run in runs})}
        hold, bases = self._read_commands()
        every_slot = getattr(sim, "backend", "cpu") == "gpu"  # one batched env: every slot steps together
        for step in range(_MAX_ITERATIONS):
            arm_now = self._arm_positions({run.robot for run in runs if not run.done})
            moved: set[int] = set()
            for run in runs:
                if run.done:
                    continue
                slot, robot = run.plan.slot, run.robot
                if not run.started:
                    if not run.ready():
                        continue
                    command = hold[robot][slot]
                    run.result.start_step = step
                    run.start(command[:-1], float(command[-1]), bases[robot][slot])
                    if run.done:
                        run.result.end_step = step
                        continue
                command = run.advance(arm_now[robot][slot])
                if command is None:
                    run.result.end_step = step
                    if not run.result.ok:  # stop where the arm is
                        hold[robot][slot, :-1] = arm_now[robot][slot]
                    continue
                hold[robot][slot, :-1] = command[0]
                hold[robot][slot, -1] = command[1]
                run.result.steps += 1
                moved.add(slot)
            if not moved:
                if all(run.done for run in runs):
                    break
                continue
            # A slot steps only while one of its own plans commands it: its world never
            # depends on how long other slots' plans run (reproducible records).
            stepped = sorted(slot_steps) if every_slot else sorted(moved)
            sim.step_physics(self._actions(hold), slots=stepped)
            for slot in stepped:
                slot_steps[slot] += 1
            taken += 1
        return MotionRun([run.result for run in runs], taken, slot_steps)

    # -- helpers ---------------------------------------------------------------------------
    def _read_commands(self) -> tuple[dict[str, np.ndarray], dict[str, list[sapien.Pose]]]:
        """Per robot: hold commands ``[N, arm_dof + 1]`` and base poses, from the simulator."""
        hold, bases = {}, {}
        for name, kin in self.kinematics.items():
            qpos = self.sim.robot_qpos(name).cpu().numpy().astype(np.float64)
            command = np.zeros((qpos.shape[0], kin.arm_dof + 1))
            command[:, :-1] = qpos[:, kin.layout.arm]
            command[:, -1] = [1.0 if kin.gripper_is_open(q) else -1.0 for q in qpos]
            hold[name] = command
            raw = self.sim.robot_base_pose(name).cpu().numpy().astype(np.float64)
            bases[name] = [sapien.Pose(p=r[:3], q=r[3:]) for r in raw]
        return hold, bases

    def _arm_positions(self, robots: set[str]) -> dict[str, np.ndarray]:
        out = {}
        for name in robots:
            qpos = self.sim.robot_qpos(name).cpu().numpy().astype(np.float64)
            out[name] = qpos[:, self.kinematics[name].layout.arm]
        return out

    def _actions(self, hold: dict[str, np.ndarray]) -> torch.Tensor | dict[str, torch.Tensor]:
        device = self.sim.device
        tensors = {
            name: torch.as_tensor(cmd, dtype=torch.float32, device=device)
            for name, cmd in hold.items()
        }
        if len(tensors) == 1:
            return next(iter(tensors.values()))
        return tensors


def _link_dependencies(runs: list[_PlanRun]) -> None:
    """Same slot and execution group, or same slot and robot: run in call order."""
    for i, run in enumerate(runs):
        for earlier in runs[:i]:
            if earlier.plan.slot != run.plan.slot:
                continue
            same_group = (
                run.plan.execution_group is not None
                and earlier.plan.execution_group == run.plan.execution_group
            )
            if same_group or earlier.robot == run.robot:
                run.deps.append(earlier)


_RUNNERS: weakref.WeakKeyDictionary[SimBatch, MotionRunner] = weakref.WeakKeyDictionary()


def run_trajectories(
    sim_batch: SimBatch, plans: Sequence[MotionPlan], config: MotionConfig | None = None
) -> list[MotionResult]:
    """Execute ``plans`` on ``sim_batch`` with a runner cached per batch; one result per plan."""
    runner = _RUNNERS.get(sim_batch)
    if runner is None:
        runner = _RUNNERS[sim_batch] = MotionRunner(sim_batch)
    return runner.run(plans, config).results
