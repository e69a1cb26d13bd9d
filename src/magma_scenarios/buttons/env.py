"""The buttons worlds ``MagmaButtons-v1`` and ``MagmaButtonsDuo-v1``; registered on import.

* ``button_red``, ``button_green``, ``button_blue``, ``button_yellow``: articulations, each a
  fixed housing (6 x 6 x 3 cm) and a 4 cm cap on a vertical prismatic joint (limits
  ``[-STROKE, 0]``) whose drive (a stiff spring with damping) pulls it back to 0. A gripper
  pushing the cap down presses the button; the spring brings it back up.
* A press is counted when a cap goes down by more than ``STROKE / 2`` after having been up
  (checked after every physics substep on CPU, every control step on GPU): ``press_count[:, i]`` grows by one, the button's index
  is appended to ``press_order`` and the light ``lights[:, i]`` toggles.
* ``magma_extra_state``: ``lights`` (bool ``[N, 4]``), ``press_count`` (int64 ``[N, 4]``),
  ``press_order`` (int64 ``[N, MAX_PRESSES]``, -1 when empty) and ``button_down`` (bool
  ``[N, 4]``, the latch of the press detector). All reset to off / zero / -1.

``obs["extra"]`` holds, per button, ``button_<colour>``: ``[N, 8]`` = the cap's pose (xyz +
wxyz) then the joint displacement (0 at rest, ``-STROKE`` fully down); the four extra-state
tensors; and the TCP poses. Button order is :data:`~magma_scenarios.buttons.world.BUTTONS`.
"""

from __future__ import annotations

import sapien
import torch
from mani_skill.envs.scene import ManiSkillScene
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.articulation import Articulation

from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.envs import DefaultEnv
from magma_scenarios.buttons.world import (
    BUTTON_CENTERS,
    BUTTON_CENTERS_DUO,
    BUTTONS,
    CAP_HALF_SIZE,
    DUO_ENV_ID,
    ENV_ID,
    HOUSING_HALF_SIZE,
    MAX_PRESSES,
    STROKE,
)

__all__ = ["DUO_ENV_ID", "ENV_ID", "MagmaButtonsDuoEnv", "MagmaButtonsEnv"]

COLORS = {
    "red": (0.9, 0.1, 0.1, 1.0),
    "green": (0.1, 0.8, 0.2, 1.0),
    "blue": (0.1, 0.3, 0.9, 1.0),
    "yellow": (0.95, 0.85, 0.1, 1.0),
}
SPRING_STIFFNESS = 200.0  # N/m: 4 N at full stroke, far below what the arm pushes
SPRING_DAMPING = 10.0
# A prismatic joint moves along its frame's x axis; this turns x onto the world's z axis.
_X_TO_Z = [0.70710678, 0.0, -0.70710678, 0.0]


def build_push_button(scene: ManiSkillScene, name: str, color: tuple, center_xy: tuple) -> Articulation:
    """One spring-returned push button: a fixed housing and a cap on a prismatic joint."""
    builder = scene.create_articulation_builder()
    housing = builder.create_link_builder()
    housing.set_name("housing")
    hz = HOUSING_HALF_SIZE[2]
    housing.add_box_collision(pose=sapien.Pose([0, 0, hz]), half_size=list(HOUSING_HALF_SIZE))
    housing.add_box_visual(
        pose=sapien.Pose([0, 0, hz]),
        half_size=list(HOUSING_HALF_SIZE),
        material=sapien.render.RenderMaterial(base_color=[0.2, 0.2, 0.2, 1.0]),
    )
    cap = builder.create_link_builder(housing)
    cap.set_name("cap")
    cap.add_box_collision(half_size=list(CAP_HALF_SIZE))
    cap.add_box_visual(
        half_size=list(CAP_HALF_SIZE),
        material=sapien.render.RenderMaterial(base_color=list(color)),
    )
    cap.set_joint_name("press")
    cap.set_joint_properties(
        "prismatic",
        limits=[[-STROKE, 0.0]],
        pose_in_parent=sapien.Pose([0, 0, 2 * hz + CAP_HALF_SIZE[2]], _X_TO_Z),
        pose_in_child=sapien.Pose([0, 0, 0], _X_TO_Z),
        friction=0.0,
        damping=0.0,
    )
    builder.initial_pose = sapien.Pose([center_xy[0], center_xy[1], 0.0])
    button = builder.build(name=name, fix_root_link=True)
    # The spring: a drive towards the joint's default target, 0 (the cap up).
    button.active_joints[0].set_drive_properties(SPRING_STIFFNESS, SPRING_DAMPING)
    return button


@register_env(ENV_ID, max_episode_steps=None)
class MagmaButtonsEnv(DefaultEnv):
    """A Panda in front of a panel of four push buttons; see the module docstring."""

    #: Button colour -> (x, y) of its centre on the table.
    button_centers: dict[str, tuple[float, float]] = BUTTON_CENTERS

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.buttons: dict[str, Articulation] = {}
        super().__init__(*args, **kwargs)

    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)
        self.buttons = {
            color: build_push_button(
                self.scene, f"button_{color}", COLORS[color], self.button_centers[color]
            )
            for color in BUTTONS
        }
        n, b = self.num_envs, len(BUTTONS)
        with torch.device(self.device):
            self.lights = torch.zeros((n, b), dtype=torch.bool)
            self.press_count = torch.zeros((n, b), dtype=torch.int64)
            self.press_order = torch.full((n, MAX_PRESSES), -1, dtype=torch.int64)
            self.button_down = torch.zeros((n, b), dtype=torch.bool)

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)
        with torch.device(self.device):
            b = len(env_idx)
            for button in self.buttons.values():  # fixed roots: only the caps move
                button.set_qpos(torch.zeros((b, 1)))
                button.set_qvel(torch.zeros((b, 1)))
            self.lights[env_idx] = False
            self.press_count[env_idx] = 0
            self.press_order[env_idx] = -1
            self.button_down[env_idx] = False

    # -- the press detector -------------------------------------------------------------------
    def displacements(self) -> torch.Tensor:
        """``[N, 4]`` joint displacement of every cap (0 up, ``-STROKE`` fully down)."""
        return torch.cat([self.buttons[c].get_qpos() for c in BUTTONS], dim=1)

    def _after_simulation_step(self) -> None:
        super()._after_simulation_step()
        if not self.gpu_sim_enabled:  # on CPU the joints are current after every substep
            self._detect_presses()

    def _after_control_step(self) -> None:
        super()._after_control_step()
        if self.gpu_sim_enabled:  # on GPU they are fetched once per control step
            self._detect_presses()

    def _detect_presses(self) -> None:
        down = self.displacements() < -STROKE / 2
        new = down & ~self.button_down.to(down.device)
        self.button_down = down.to(self.device)
        if not bool(new.any()):
            return
        for env, index in torch.nonzero(new.to(self.device)).tolist():
            self.press_count[env, index] += 1
            self.lights[env, index] = ~self.lights[env, index]
            free = (self.press_order[env] < 0).nonzero()
            if len(free):
                self.press_order[env, int(free[0])] = index

    # -- observation and extra state ---------------------------------------------------------
    def _get_obs_extra(self, info: dict) -> dict[str, torch.Tensor]:
        extra = super()._get_obs_extra(info)
        for color, button in self.buttons.items():
            cap = button.links_map["cap"].pose.raw_pose
            extra[f"button_{color}"] = torch.cat([cap, button.get_qpos()], dim=1)
        return extra

    def get_magma_extra_state(self) -> StateTree:
        return {
            "lights": self.lights.clone(),
            "press_count": self.press_count.clone(),
            "press_order": self.press_order.clone(),
            "button_down": self.button_down.clone(),
        }

    def set_magma_extra_state(self, state: StateTree) -> None:
        for key in ("lights", "press_count", "press_order", "button_down"):
            setattr(self, key, state[key].clone().to(self.device))


@register_env(DUO_ENV_ID, max_episode_steps=None)
class MagmaButtonsDuoEnv(MagmaButtonsEnv):
    """Two Pandas (``panda-0`` at y = -0.35, ``panda-1`` at y = +0.35) at a longer panel:
    ``panda-0`` reaches red and green, ``panda-1`` blue and yellow."""

    button_centers = BUTTON_CENTERS_DUO

    def __init__(self, *args: object, robot_uids: tuple[str, ...] = ("panda", "panda"), **kwargs: object):
        super().__init__(*args, robot_uids=robot_uids, **kwargs)

    def robot_base_poses(self) -> list[sapien.Pose]:
        return [sapien.Pose(p=[-0.615, -0.35, 0.0]), sapien.Pose(p=[-0.615, 0.35, 0.0])]

