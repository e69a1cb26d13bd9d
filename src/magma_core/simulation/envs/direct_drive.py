"""The motion path's control step on one CPU env, without ManiSkill's per-step wrappers.

``SimBatch.step_physics`` on CPU spends about as long in ManiSkill's action handling
(``env._step_action``: tensor conversions, the combined controller's checks, a qpos read per
controller, one wrapped ``set_drive_target`` per joint) as in PhysX itself. For the plain
joint-position controllers that the motion layer drives, the drive targets are a pure
function of the action, so :class:`DirectDrive` sets them on the PhysX joints directly and
then runs the same substep loop and hooks as ``_step_action`` (``_before_control_step``,
per substep the agent's ``before_simulation_step``, ``_before_simulation_step``,
``scene.step()``, ``_after_simulation_step``; then ``_after_control_step``). The PhysX scene
receives the same float32 targets in the same order, so worlds are bit-identical to the
wrapped path (``benchmarks/record_baseline.py`` compares every preset's world digests).

What counts as plain (else :meth:`DirectDrive.build` returns None and the wrapped path runs):
a world that keeps ManiSkill's ``_step_action``, and an agent (or a ``MultiAgent`` of agents) with ManiSkill's own ``set_action`` and
``before_simulation_step``, whose controller is a ``CombinedController`` of
``PDJointPosController``\\ s (mimic ones included) without delta targets or interpolation.
Un-normalised ones take the action as their targets; the others (the gripper's mimic
controller, whose commands are a few values) run ManiSkill's own ``set_action`` the first
time an action value is seen and replay the targets it set afterwards. The controllers'
``_target_qpos`` bookkeeping is not updated on this path: with these settings ManiSkill
reads it only inside ``set_action``, which rewrites it whole.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from mani_skill.agents.base_agent import BaseAgent
from mani_skill.agents.controllers.base_controller import BaseController, CombinedController
from mani_skill.agents.controllers.pd_joint_pos import (
    PDJointPosController,
    PDJointPosMimicController,
)
from mani_skill.agents.multi_agent import MultiAgent
from mani_skill.envs.sapien_env import BaseEnv

#: Distinct actions remembered per memoised controller (gripper commands are a handful).
MEMO_SIZE = 64


class _Part:
    """One controller of one robot: its action columns and its PhysX joints."""

    __slots__ = ("controller", "start", "end", "joints", "identity", "memo")

    def __init__(self, controller: BaseController, start: int, end: int) -> None:
        self.controller = controller
        self.start, self.end = start, end
        self.joints = [joint._objs[0] for joint in controller.joints]
        self.identity = type(controller) is PDJointPosController and not controller._normalize_action
        self.memo: dict[bytes, list[float]] = {}

    def apply(self, row: np.ndarray, action: torch.Tensor) -> None:
        values = row[self.start:self.end]
        if self.identity:
            for joint, value in zip(self.joints, values.tolist(), strict=True):
                joint.set_drive_target(value)
            return
        key = values.tobytes()
        targets = self.memo.get(key)
        if targets is None:  # ManiSkill's own controller computes and sets them
            self.controller.set_action(action[:, self.start:self.end])
            targets = [joint.get_drive_target() for joint in self.joints]
            if len(self.memo) < MEMO_SIZE:
                self.memo[key] = targets
            return
        for joint, target in zip(self.joints, targets, strict=True):
            joint.set_drive_target(target)


def _plain_parts(agent: BaseAgent) -> list[_Part] | None:
    if type(agent).set_action is not BaseAgent.set_action:
        return None
    if type(agent).before_simulation_step is not BaseAgent.before_simulation_step:
        return None
    controller = agent.controller
    if type(controller) is not CombinedController:
        return None
    parts = []
    for uid, sub in controller.controllers.items():
        if type(sub) not in (PDJointPosController, PDJointPosMimicController):
            return None
        if sub.config.use_delta or sub.config.interpolate:
            return None
        if isinstance(sub, PDJointPosMimicController) and (
            len(sub.control_joint_indices) + len(sub.mimic_joint_indices) != len(sub.joints)
        ):
            return None
        start, end = controller.action_mapping[uid]
        if type(sub) is PDJointPosController and not sub._normalize_action and end - start != len(sub.joints):
            return None
        parts.append(_Part(sub, start, end))
    return parts


class DirectDrive:
    """The control step of one CPU env's current scene (see the module docstring).

    Valid while the env keeps its agent: a rebuilt scene (``reconfigure``) needs a new one
    (``SimBatch`` builds one per agent).
    """

    def __init__(self, env: BaseEnv, robots: dict[str | None, tuple[list[_Part], int]]) -> None:
        self.env = env
        self.agent = env.agent
        self._robots = robots  # robot name (None: the single agent) -> (parts, action width)

    @classmethod
    def build(cls, env: BaseEnv) -> DirectDrive | None:
        """The direct path for ``env``'s current agent, or None where it does not apply."""
        if getattr(env, "gpu_sim_enabled", False) or env.num_envs != 1:
            return None
        if type(env)._step_action is not BaseEnv._step_action:  # a world with its own step
            return None
        agent = env.agent
        if isinstance(agent, MultiAgent):
            if type(agent).set_action is not MultiAgent.set_action:
                return None
            if type(agent).before_simulation_step is not MultiAgent.before_simulation_step:
                return None
            subs: dict[str | None, BaseAgent] = dict(agent.agents_dict)
        else:
            subs = {None: agent}
        robots: dict[str | None, tuple[list[_Part], int]] = {}
        for name, sub in subs.items():
            parts = _plain_parts(sub)
            if parts is None:
                return None
            robots[name] = (parts, int(sub.controller.single_action_space.shape[0]))
        return cls(env, robots)

    def accepts(self, action: object) -> bool:
        """Whether ``action`` has the shape this path takes (``[1, A]`` per robot, on CPU)."""
        if None in self._robots:
            return isinstance(action, torch.Tensor) and tuple(action.shape) == (1, self._robots[None][1])
        return isinstance(action, Mapping) and set(action) == set(self._robots) and all(
            isinstance(action[name], torch.Tensor) and tuple(action[name].shape) == (1, width)
            for name, (_, width) in self._robots.items()
        )

    def step(self, action: torch.Tensor | Mapping[str, torch.Tensor]) -> None:
        """One control step: drive targets from ``action``, then the substeps and hooks."""
        env = self.env
        for name, (parts, _) in self._robots.items():
            tensor = action if name is None else action[name]  # type: ignore[index]
            row = tensor.detach().cpu().numpy()[0]
            if np.isnan(row).any():  # as ManiSkill's BaseAgent.set_action
                raise ValueError("Action cannot be NaN. Environment received:", tensor)
            for part in parts:
                part.apply(row, tensor)
        env._before_control_step()
        agent, scene = self.agent, env.scene
        for _ in range(env._sim_steps_per_control):
            agent.before_simulation_step()
            env._before_simulation_step()
            scene.step()
            env._after_simulation_step()
        env._after_control_step()
