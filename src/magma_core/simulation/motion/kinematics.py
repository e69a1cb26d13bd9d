"""Arm kinematics for the motion layer: SAPIEN's Pinocchio model of one robot.

IK is solved in the robot's base frame on the arm joints only (fingers held). A solution
outside the joint limits is retried from the robot's rest configuration, then rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sapien
from mani_skill.agents.base_agent import BaseAgent

__all__ = ["ArmKinematics", "pose_interpolate", "quat_angle"]


@dataclass
class _Layout:
    arm: np.ndarray  # indices of arm joints among active joints
    gripper: np.ndarray  # indices of gripper joints among active joints
    gripper_open_qpos: float


class ArmKinematics:
    """IK / FK for one robot kind (a Panda-like arm with a parallel gripper).

    The agent must name ``arm_joint_names``, ``gripper_joint_names`` and a ``tcp`` link, as
    ManiSkill's Panda does.
    """

    def __init__(self, agent: BaseAgent, *, ik_iterations: int = 200, ik_eps: float = 1e-4):
        arm_names = getattr(agent, "arm_joint_names", None)
        gripper_names = getattr(agent, "gripper_joint_names", None)
        tcp = getattr(agent, "tcp", None)
        if not arm_names or not gripper_names or tcp is None:
            raise ValueError(
                f"robot {agent.uid!r} needs arm_joint_names, gripper_joint_names and a tcp link "
                "for the motion layer"
            )
        px = agent.robot._objs[0]
        self.model = px.create_pinocchio_model()
        names = [j.name for j in agent.robot.active_joints]
        self.dof = len(names)
        arm = np.array([names.index(n) for n in arm_names])
        gripper = np.array([names.index(n) for n in gripper_names])
        limits = agent.robot.get_qlimits()[0].cpu().numpy()
        self.lower, self.upper = limits[:, 0], limits[:, 1]
        self.layout = _Layout(arm, gripper, float(self.upper[gripper].min()))
        self.tcp_index = int(tcp._objs[0].index)
        self.mask = np.zeros(self.dof, dtype=np.int32)
        self.mask[arm] = 1
        rest = agent.keyframes.get("rest")
        self.rest_qpos = (
            np.asarray(rest.qpos, dtype=np.float64)
            if rest is not None
            else (self.lower + self.upper) / 2
        )
        self.ik_iterations = ik_iterations
        self.ik_eps = ik_eps

    @property
    def arm_dof(self) -> int:
        return len(self.layout.arm)

    def full_qpos(self, arm_q: np.ndarray) -> np.ndarray:
        """A full configuration with ``arm_q`` on the arm and the rest pose elsewhere."""
        q = self.rest_qpos.copy()
        q[self.layout.arm] = arm_q
        return q

    def fk(self, arm_q: np.ndarray) -> sapien.Pose:
        """TCP pose in the base frame for arm configuration ``arm_q``."""
        self.model.compute_forward_kinematics(self.full_qpos(arm_q))
        return self.model.get_link_pose(self.tcp_index)

    def ik(self, pose_in_base: sapien.Pose, seed_arm_q: np.ndarray) -> np.ndarray | None:
        """Arm joints reaching ``pose_in_base`` within the joint limits, or None."""
        for seed in (self.full_qpos(seed_arm_q), self.rest_qpos):
            q, ok, _ = self.model.compute_inverse_kinematics(
                self.tcp_index,
                pose_in_base,
                initial_qpos=seed,
                active_qmask=self.mask,
                eps=self.ik_eps,
                max_iterations=self.ik_iterations,
            )
            arm_q = np.asarray(q)[self.layout.arm]
            lo, hi = self.lower[self.layout.arm], self.upper[self.layout.arm]
            if ok and np.all(arm_q >= lo - 1e-4) and np.all(arm_q <= hi + 1e-4):
                return np.clip(arm_q, lo, hi)
        return None

    def gripper_is_open(self, qpos: np.ndarray) -> bool:
        """Whether the fingers stand (nearly) fully open, i.e. were last commanded OPEN."""
        return bool(qpos[self.layout.gripper].min() >= self.layout.gripper_open_qpos - 2e-3)


def quat_angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """Rotation angle (rad) between two wxyz quaternions."""
    dot = abs(float(np.dot(q1, q2)))
    return 2.0 * float(np.arccos(min(1.0, dot)))


def pose_interpolate(a: sapien.Pose, b: sapien.Pose, t: float) -> sapien.Pose:
    """Linear position, spherical-linear orientation interpolation from ``a`` to ``b``."""
    p = (1 - t) * np.asarray(a.p) + t * np.asarray(b.p)
    q1, q2 = np.asarray(a.q, dtype=np.float64), np.asarray(b.q, dtype=np.float64)
    if np.dot(q1, q2) < 0:
        q2 = -q2
    dot = min(1.0, float(np.dot(q1, q2)))
    if dot > 0.9995:
        q = (1 - t) * q1 + t * q2
    else:
        theta = np.arccos(dot)
        q = (np.sin((1 - t) * theta) * q1 + np.sin(t * theta) * q2) / np.sin(theta)
    return sapien.Pose(p=p, q=q / np.linalg.norm(q))
