"""The kitchen world ``MagmaKitchen-v1``; registered on import. Layout and names are in
:mod:`magma_scenarios.kitchen.world`.

* ``drawer_left``, ``drawer_right``: articulations, a fixed housing and a ``tray`` link on a
  prismatic joint (0 closed, ``DRAWER_TRAVEL`` fully out towards the robot).
* ``box``: an articulation, a fixed open box and a ``lid`` link on a revolute joint about y
  (0 closed, ``LID_OPEN`` open).
* ``bowl_a``, ``bowl_b``: dynamic open containers; the six objects of ``OBJECTS``: dynamic.

Each joint has a stiff drive whose target is extra state (``joint_target``, ``[N, 3]`` in
``JOINTS`` order). After every control step the world checks the hand: a closed, empty
gripper within ``HANDLE_RADIUS`` of a handle attaches to it, and while attached the joint's
target follows the hand (pulling a drawer's handle towards the robot opens it; swinging the
lid's handle up and over the hinge opens the box). Opening the gripper, or moving 6 cm off
the handle's path, lets go. A latched box (``box_latched``) does not follow the hand.

``obs["extra"]`` holds the pose ``[N, 7]`` of every object, bowl, drawer tray (under the
drawer's name) and of the box (its base); ``joints`` (``[N, 3]``, the joint positions), the
extra state (``joint_target``, ``box_latched``, ``attached``, ``attach_q0``,
``attach_s0``) and the TCP pose.
"""

from __future__ import annotations

import math

import numpy as np
import sapien
import torch
from mani_skill.envs.scene import ManiSkillScene
from mani_skill.utils.building.articulation_builder import LinkBuilder
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.actor import Actor
from mani_skill.utils.structs.articulation import Articulation
from mani_skill.utils.structs.pose import Pose as MSPose

from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.envs import DefaultEnv
from magma_scenarios.kitchen import world as w

__all__ = ["ENV_ID", "MagmaKitchenEnv"]

ENV_ID = w.ENV_ID
DRAWER_STIFFNESS, DRAWER_DAMPING = 3000.0, 150.0
LID_STIFFNESS, LID_DAMPING = 30.0, 3.0
RELEASE_DISTANCE = 0.06
GRIPPER_CLOSED = 0.01
GRIP = 2.0  # friction of trays and bowls: what they hold rides with them  # sum of the two finger joints of a closed, empty gripper
_FLIP_X = [0.0, 0.0, 0.0, 1.0]  # 180 deg about z: the joint's +x is the world's -x
_X_TO_Y = [math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)]  # 90 deg about z: the joint's x is y
_UPRIGHT = [math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0]  # a cylinder's axis (x) onto z
WOOD = (0.62, 0.45, 0.3, 1.0)
TRAY = (0.8, 0.7, 0.55, 1.0)
BOX_COLOR = (0.35, 0.55, 0.6, 1.0)
BOWL_COLORS = {"bowl_a": (0.9, 0.9, 0.85, 1.0), "bowl_b": (0.75, 0.75, 0.9, 1.0)}


def _mat(color: tuple) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=list(color))


def _add_box(builder: LinkBuilder, center: list, half: list, color: tuple, collision: bool = True,
             grip: bool = False) -> None:
    pose = sapien.Pose(center)
    if collision:
        material = sapien.physx.PhysxMaterial(GRIP, GRIP, 0.0) if grip else None
        builder.add_box_collision(pose=pose, half_size=half, material=material)
    builder.add_box_visual(pose=pose, half_size=half, material=_mat(color))


def _open_box_parts(inner: tuple, wall: float, floor: tuple, top: float) -> list:
    """(centre, half) of a floor and four walls around an ``inner`` (x, y) half-size."""
    ix, iy = inner
    ox, oy = ix + wall, iy + wall
    fz, wz = (floor[0] + floor[1]) / 2, (floor[1] + top) / 2
    fh, wh = (floor[1] - floor[0]) / 2, (top - floor[1]) / 2
    return [
        ([0, 0, fz], [ox, oy, fh]),
        ([-ix - wall / 2, 0, wz], [wall / 2, oy, wh]),
        ([ix + wall / 2, 0, wz], [wall / 2, oy, wh]),
        ([0, iy + wall / 2, wz], [ix, wall / 2, wh]),
        ([0, -iy - wall / 2, wz], [ix, wall / 2, wh]),
    ]


def build_drawer(scene: ManiSkillScene, name: str, y: float) -> Articulation:
    """A housing (fixed) and a tray on a prismatic joint that slides out along -x."""
    builder = scene.create_articulation_builder()
    housing = builder.create_link_builder()
    housing.set_name("housing")
    x0, x1 = w.HOUSING_X
    cx, hx = (x0 + x1) / 2, (x1 - x0) / 2
    t0, t1 = w.HOUSING_TOP
    half_y = w.TRAY_INNER[1] + w.TRAY_WALL + 0.015
    _add_box(housing, [cx, 0, (t0 + t1) / 2], [hx, half_y, (t1 - t0) / 2], WOOD)
    for side in (-1, 1):
        _add_box(housing, [cx, side * (half_y - 0.005), t0 / 2 + 0.01], [hx, 0.005, t0 / 2 - 0.01],
                 WOOD)
    _add_box(housing, [x1 - 0.005, 0, t0 / 2 + 0.01], [0.005, half_y, t0 / 2 - 0.01], WOOD)
    tray = builder.create_link_builder(housing)
    tray.set_name("tray")
    for center, half in _open_box_parts(w.TRAY_INNER, w.TRAY_WALL, w.TRAY_FLOOR, w.TRAY_WALL_TOP):
        _add_box(tray, center, half, TRAY, grip=True)
    tray.set_joint_name("slide")
    tray.set_joint_properties(
        "prismatic",
        limits=[[0.0, w.DRAWER_TRAVEL]],
        pose_in_parent=sapien.Pose([w.TRAY_CLOSED_X, 0, 0], _FLIP_X),
        pose_in_child=sapien.Pose([0, 0, 0], _FLIP_X),
        friction=0.0,
        damping=0.0,
    )
    builder.initial_pose = sapien.Pose([0.0, y, 0.0])
    drawer = builder.build(name=name, fix_root_link=True)
    drawer.active_joints[0].set_drive_properties(DRAWER_STIFFNESS, DRAWER_DAMPING)
    return drawer


def build_lidded_box(scene: ManiSkillScene, name: str) -> Articulation:
    """An open box (fixed) and a lid on a revolute joint along y at its far top edge."""
    builder = scene.create_articulation_builder()
    base = builder.create_link_builder()
    base.set_name("base")
    inner = (w.BOX_HALF[0] - w.BOX_WALL, w.BOX_HALF[1] - w.BOX_WALL)
    for center, half in _open_box_parts(inner, w.BOX_WALL, (0.0, w.BOX_WALL), 2 * w.BOX_HALF[2]):
        _add_box(base, center, half, BOX_COLOR)
    lid = builder.create_link_builder(base)
    lid.set_name("lid")
    t = w.LID_THICKNESS
    _add_box(lid, [-w.BOX_HALF[0], 0, t / 2], [w.BOX_HALF[0], w.BOX_HALF[1], t / 2], BOX_COLOR)
    _add_box(lid, [-2 * w.BOX_HALF[0] + 0.01, 0, t + 0.005], [0.008, 0.03, 0.005],
             (0.2, 0.2, 0.2, 1.0), collision=False)  # the handle: a mark, not a body
    lid.set_joint_name("hinge")
    lid.set_joint_properties(
        "revolute",
        limits=[[0.0, w.LID_OPEN]],
        pose_in_parent=sapien.Pose([w.BOX_HALF[0], 0, 2 * w.BOX_HALF[2]], _X_TO_Y),
        pose_in_child=sapien.Pose([0, 0, 0], _X_TO_Y),
        friction=0.0,
        damping=0.0,
    )
    builder.initial_pose = sapien.Pose([w.BOX_CENTER[0], w.BOX_CENTER[1], 0.0])
    box = builder.build(name=name, fix_root_link=True)
    box.active_joints[0].set_drive_properties(LID_STIFFNESS, LID_DAMPING)
    return box


@register_env(ENV_ID, max_episode_steps=None)
class MagmaKitchenEnv(DefaultEnv):
    """One Panda at a counter with two drawers, a lidded box, two bowls and six objects.

    Args:
        latched: whether the box's lid starts latched (default False).
        Other arguments go to :class:`~magma_core.simulation.envs.DefaultEnv`.
    """

    def __init__(self, *args: object, latched: bool = False, **kwargs: object) -> None:
        if not isinstance(latched, bool):
            raise ValueError(f"latched must be a bool, got {latched!r}")
        self.start_latched = latched
        self.objects: dict[str, Actor] = {}
        self.bowls: dict[str, Actor] = {}
        self.joints_art: dict[str, Articulation] = {}
        super().__init__(*args, **kwargs)

    # -- building -------------------------------------------------------------------------
    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)
        for name in w.DRAWERS:
            self.joints_art[name] = build_drawer(self.scene, name, w.DRAWER_Y[name])
        self.joints_art[w.BOX] = build_lidded_box(self.scene, w.BOX)
        for name in w.BOWLS:
            self.bowls[name] = self._build_bowl(name)
        for spec in w.OBJECTS:
            self.objects[spec.name] = self._build_object(spec)
        n = self.num_envs
        with torch.device(self.device):
            self.joint_target = torch.zeros((n, len(w.JOINTS)))
            self.box_latched = torch.zeros(n, dtype=torch.bool)
            self.attached = torch.full((n,), -1, dtype=torch.int64)
            self.attach_q0 = torch.zeros(n)
            self.attach_s0 = torch.zeros(n)

    def _build_bowl(self, name: str) -> Actor:
        builder = self.scene.create_actor_builder()
        inner = (w.BOWL_HALF[0] - w.BOWL_WALL, w.BOWL_HALF[1] - w.BOWL_WALL)
        for center, half in _open_box_parts(inner, w.BOWL_WALL, (0.0, w.BOWL_FLOOR),
                                            2 * w.BOWL_HALF[2]):
            _add_box(builder, center, half, BOWL_COLORS[name], grip=True)
        builder.initial_pose = sapien.Pose([w.BOWL_A_XY[0], w.BOWL_A_XY[1], 0.0])
        bowl = builder.build(name=name)
        self.observe_pose(name, bowl)
        self._actor_shapes[name] = {"shape": "box", "half_size": list(w.BOWL_HALF),
                                    "color": list(BOWL_COLORS[name]), "kind": "zone"}
        return bowl

    def _build_object(self, spec: w.ObjectSpec) -> Actor:
        color = list(w.COLORS[spec.color])
        if spec.kind != "cup":
            return self.build_box(spec.name, spec.half, color, initial_xy=(-0.3, 0.0))
        builder = self.scene.create_actor_builder()
        pose = sapien.Pose([0, 0, 0], _UPRIGHT)
        builder.add_cylinder_collision(pose=pose, radius=spec.half[0], half_length=spec.half[2])
        builder.add_cylinder_visual(pose=pose, radius=spec.half[0], half_length=spec.half[2],
                                    material=_mat(tuple(color)))
        builder.initial_pose = sapien.Pose([-0.3, 0.0, spec.half[2]])
        actor = builder.build(name=spec.name)
        self.observe_pose(spec.name, actor)
        self._actor_shapes[spec.name] = {"shape": "box", "half_size": list(spec.half),
                                         "color": color, "kind": "object"}
        return actor

    # -- reset ----------------------------------------------------------------------------
    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)
        with torch.device(self.device):
            b = len(env_idx)
            for art in self.joints_art.values():
                art.set_qpos(torch.zeros((b, 1)))
                art.set_qvel(torch.zeros((b, 1)))
            self.joint_target[env_idx] = 0.0
            self.box_latched[env_idx] = self.start_latched
            self.attached[env_idx] = -1
            self._apply_targets()
            rng = self._batched_episode_rng[env_idx]
            jitter = np.asarray(rng.uniform(-w.OBJECT_JITTER, w.OBJECT_JITTER,
                                            (len(w.OBJECTS), 2))).reshape(b, len(w.OBJECTS), 2)
            tray_x = w.TRAY_CLOSED_X
            floor = w.TRAY_FLOOR[1]
            bowl_xyz = {"bowl_a": (*w.BOWL_A_XY, 0.0),
                        "bowl_b": (tray_x, w.DRAWER_Y["drawer_right"], floor)}
            for name, bowl in self.bowls.items():
                bowl.set_pose(MSPose.create_from_pq(torch.tensor([bowl_xyz[name]]).repeat(b, 1)))
            for i, spec in enumerate(w.OBJECTS):
                where = w.START[spec.name]
                if isinstance(where, int):
                    x, y, z, jit = *w.COUNTER_SPOTS[where], spec.half[2], True
                elif where in self.bowls:
                    bx, by, bz = bowl_xyz[where]
                    x, y = bx + w.SPOT_OFFSETS[0][0], by + w.SPOT_OFFSETS[0][1]
                    z, jit = bz + w.BOWL_FLOOR + spec.half[2], False
                else:  # a drawer
                    x = tray_x + w.DRAWER_SPOT_OFFSETS[0][0]
                    y, z, jit = w.DRAWER_Y[where], floor + spec.half[2], False
                xyz = torch.tensor([[x, y, z]]).repeat(b, 1)
                if jit:
                    xyz[:, :2] += torch.as_tensor(jitter[:, i], dtype=torch.float32)
                self.objects[spec.name].set_pose(MSPose.create_from_pq(xyz))

    # -- the hand on the handles ----------------------------------------------------------
    def joint_positions(self) -> torch.Tensor:
        """``[N, 3]`` joint positions in ``JOINTS`` order."""
        return torch.cat([self.joints_art[n].get_qpos() for n in w.JOINTS], dim=1)

    def _apply_targets(self) -> None:
        for i, name in enumerate(w.JOINTS):
            art = self.joints_art[name]
            art.set_joint_drive_targets(self.joint_target[:, i : i + 1].clone(),
                                        joints=art.active_joints)

    def _handles(self, q: torch.Tensor, y_offset: torch.Tensor | None = None) -> torch.Tensor:
        """``[N, 3, 3]`` handle points (xyz) for joint positions ``q``."""
        n = q.shape[0]
        out = torch.zeros((n, len(w.JOINTS), 3), device=q.device)
        for i, name in enumerate(w.DRAWERS):
            out[:, i, 0] = w.drawer_handle_x(0.0) - q[:, i]
            out[:, i, 1] = w.DRAWER_Y[name]
            out[:, i, 2] = w.HANDLE_Z
        hx, hz = w.HINGE
        angle = q[:, 2]
        out[:, 2, 0] = hx - w.HANDLE_REACH * torch.cos(angle)
        out[:, 2, 1] = w.BOX_CENTER[1]
        out[:, 2, 2] = hz + w.LID_THICKNESS + w.HANDLE_REACH * torch.sin(angle)
        return out

    @staticmethod
    def _coordinate(joint: int, tcp: torch.Tensor) -> torch.Tensor:
        """The hand's coordinate along joint ``joint``'s path (metres or radians)."""
        if joint < len(w.DRAWERS):
            return -tcp[..., 0]
        hx, hz = w.HINGE
        return torch.atan2(tcp[..., 2] - hz - w.LID_THICKNESS, hx - tcp[..., 0])

    def _after_control_step(self) -> None:
        super()._after_control_step()
        agent = next(iter(self.agents.values()))
        tcp = agent.tcp.pose.p.to(self.device)
        fingers = agent.robot.get_qpos()[:, -2:].sum(dim=1).to(self.device)
        closed = fingers < GRIPPER_CLOSED
        if not bool(closed.any()) and not bool((self.attached >= 0).any()):
            return  # the usual case: nothing holds a handle, nothing can take one
        targets = self.joint_target
        handles = self._handles(targets)
        limits = torch.tensor([w.DRAWER_TRAVEL, w.DRAWER_TRAVEL, w.LID_OPEN], device=self.device)
        for env in range(self.num_envs):
            joint = int(self.attached[env])
            if joint >= 0:
                off = float(torch.linalg.norm(handles[env, joint] - tcp[env]))
                if not bool(closed[env]) or off > RELEASE_DISTANCE:
                    self.attached[env] = -1
                    continue
                s = self._coordinate(joint, tcp[env])
                q = self.attach_q0[env] + s - self.attach_s0[env]
                targets[env, joint] = torch.clamp(q, 0.0, float(limits[joint]))
                continue
            if not bool(closed[env]):
                continue
            d = torch.linalg.norm(handles[env] - tcp[env], dim=1)
            joint = int(torch.argmin(d))
            if float(d[joint]) > w.HANDLE_RADIUS:
                continue
            if joint == len(w.DRAWERS) and bool(self.box_latched[env]):
                continue
            self.attached[env] = joint
            self.attach_q0[env] = targets[env, joint]
            self.attach_s0[env] = self._coordinate(joint, tcp[env])
        self._apply_targets()

    # -- observation and extra state ------------------------------------------------------
    def _get_obs_extra(self, info: dict) -> dict[str, torch.Tensor]:
        extra = super()._get_obs_extra(info)
        for name in w.DRAWERS:
            extra[name] = self.joints_art[name].links_map["tray"].pose.raw_pose
        extra[w.BOX] = self.joints_art[w.BOX].links_map["base"].pose.raw_pose
        extra["joints"] = self.joint_positions()
        return extra

    def get_magma_extra_state(self) -> StateTree:
        return {
            "joint_target": self.joint_target.clone(),
            "box_latched": self.box_latched.clone(),
            "attached": self.attached.clone(),
            "attach_q0": self.attach_q0.clone(),
            "attach_s0": self.attach_s0.clone(),
        }

    def set_magma_extra_state(self, state: StateTree) -> None:
        for key in ("joint_target", "box_latched", "attached", "attach_q0", "attach_s0"):
            setattr(self, key, state[key].clone().to(self.device))
        self._apply_targets()
