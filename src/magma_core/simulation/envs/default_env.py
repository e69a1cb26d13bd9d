"""``DefaultEnv``: the ManiSkill 3 base every MAGMA scenario world subclasses.

The hooks a world implements, and what the base gives it, are in :class:`DefaultEnv`'s
docstring (shown on the reference page).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import sapien
import torch
from mani_skill.agents.base_agent import BaseAgent
from mani_skill.agents.multi_agent import MultiAgent
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.envs.utils.system.backend import CPU_SIM_BACKENDS
from mani_skill.sensors.camera import CameraConfig
from mani_skill.utils import sapien_utils
from mani_skill.utils.building import actors as ms_actors
from mani_skill.utils.scene_builder.table import TableSceneBuilder
from mani_skill.utils.structs.actor import Actor
from mani_skill.utils.structs.pose import Pose as MSPose
from mani_skill.utils.structs.types import SimConfig

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.envs.builders import LegacyBuilders
from magma_core.simulation.envs.cameras import default_cameras
from magma_core.simulation.envs.headless import ensure_headless

__all__ = ["DefaultEnv", "DefaultMultiAgentEnv"]

ensure_headless()

BODY_TYPES = ("dynamic", "kinematic", "static")
TABLE_POSE = sapien.Pose(p=[-0.12, 0, -0.9196429], q=[0.7071068, 0, 0, 0.7071068])


class DefaultEnv(LegacyBuilders, BaseEnv):
    """Base ManiSkill env for MAGMA worlds.

    A world is a few ManiSkill lifecycle hooks on top of this class::

        @register_env("MyWorld-v1")
        class MyWorld(DefaultEnv):
            def _load_scene(self, options):
                super()._load_scene(options)          # table + ground
                self.cube = self.build_box("cube", half_size=0.02, color=(1, 0, 0, 1))
                self.zone = self.build_zone("zone", center_xy=(0.0, 0.15))

            def _initialize_episode(self, env_idx, options):
                super()._initialize_episode(env_idx, options)   # table + robots at rest
                ...                                             # place objects for env_idx

    What the base gives a world:

    * robots from ``robot_uids`` (a uid string, or a tuple of uids for several arms, named
      ``"<uid>-<i>"`` as ManiSkill does; see :attr:`robot_names`), placed by
      :meth:`robot_base_poses` and reset to their ``rest`` keyframe plus seeded noise;
    * table-top helpers :meth:`build_box` and :meth:`build_zone` (and the predecessor's
      ``build_a_zone`` and ``create_box``);
    * ``obs["extra"]``: the pose ``[N, 7]`` of every actor registered with ``observe=True`` (or
      :meth:`observe_pose`), the TCP pose of each robot (``tcp``; ``tcp_<i>`` as well with
      several robots) and every top-level tensor of the extra state;
    * extra state: ``get_state_dict()`` adds ``magma_extra_state`` from
      :meth:`get_magma_extra_state`, ``set_state_dict()`` hands it back to
      :meth:`set_magma_extra_state`. Both hooks default to nothing; leaves keep a leading batch
      dimension.

    The default controller is ``pd_joint_pos`` (what :mod:`magma_core.simulation.motion` drives).
    """

    #: Controller used when ``control_mode`` is not given.
    default_control_mode: str = "pd_joint_pos"
    #: Expose every top-level extra-state tensor in ``obs["extra"]`` under its own key.
    extra_state_in_obs: bool = True
    #: Build ManiSkill's table (top at z=0) and ground in :meth:`_load_scene`.
    use_table: bool = True
    #: Where the ``overview`` camera stands and what it looks at (world frame, metres).
    overview_eye: tuple[float, float, float] = (0.55, 0.55, 0.6)
    overview_target: tuple[float, float, float] = (-0.05, 0.0, 0.05)

    def __init__(
        self,
        *args: object,
        robot_uids: str | tuple[str, ...] = "panda",
        robot_init_qpos_noise: float = 0.02,
        **kwargs: object,
    ) -> None:
        if isinstance(robot_uids, str):
            names = [robot_uids]
        elif (
            isinstance(robot_uids, tuple)
            and robot_uids
            and all(isinstance(uid, str) for uid in robot_uids)
        ):
            names = (
                [robot_uids[0]]
                if len(robot_uids) == 1
                else [f"{uid}-{i}" for i, uid in enumerate(robot_uids)]
            )
        else:
            raise TypeError(f"robot_uids must be a str or a tuple of str, got {robot_uids!r}")
        self.robot_names: list[str] = names
        """Names of the robots, in index order (``ToolExecution.robot_idx`` indexes this):
        the uid for one robot (e.g. ``"panda"``), ``"<uid>-<i>"`` for several."""
        self.robot_init_qpos_noise = robot_init_qpos_noise
        self._observed_actors: dict[str, Actor] = {}
        self._actor_shapes: dict[str, JSONDict] = {}
        kwargs.setdefault("control_mode", self.default_control_mode)
        super().__init__(*args, robot_uids=robot_uids, **kwargs)

    # -- robots ----------------------------------------------------------------------------
    @property
    def agents(self) -> dict[str, BaseAgent]:
        """Robot name → agent, in index order."""
        if isinstance(self.agent, MultiAgent):
            return dict(self.agent.agents_dict)
        return {self.robot_names[0]: self.agent}

    def robot_base_poses(self) -> list[sapien.Pose]:
        """Where each robot's base stands (override for other layouts).

        One robot stands at ``(-0.615, 0, 0)`` facing +x; several are spread along y.
        """
        n = len(self.robot_names)
        if n == 1:
            return [sapien.Pose(p=[-0.615, 0.0, 0.0])]
        spacing = 0.7
        return [sapien.Pose(p=[-0.615, (i - (n - 1) / 2) * spacing, 0.0]) for i in range(n)]

    def _load_agent(self, options: dict, *args: object, **kwargs: object) -> None:
        poses = self.robot_base_poses()
        super()._load_agent(options, poses if len(poses) > 1 else poses[0])

    def _initialize_robots(self, env_idx: torch.Tensor) -> None:
        """Put every robot at its base pose, in its ``rest`` keyframe plus seeded arm noise."""
        b = len(env_idx)
        rng = self._batched_episode_rng[env_idx]
        for agent, base in zip(self.agents.values(), self.robot_base_poses(), strict=True):
            rest = agent.keyframes.get("rest")
            dof = agent.robot.max_dof
            qpos = np.zeros((b, dof)) if rest is None else np.tile(rest.qpos, (b, 1))
            if self.robot_init_qpos_noise > 0:
                noise = np.asarray(rng.normal(0, self.robot_init_qpos_noise, dof)).reshape(b, dof)
                arm = getattr(agent, "arm_joint_names", None)
                if arm is not None:
                    names = [j.name for j in agent.robot.active_joints]
                    mask = np.array([n in arm for n in names])
                    noise[:, ~mask] = 0.0
                qpos = qpos + noise
            agent.reset(torch.as_tensor(qpos, dtype=torch.float32, device=self.device))
            agent.robot.set_pose(base)

    # -- scene -----------------------------------------------------------------------------
    @property
    def _default_sim_config(self) -> SimConfig:
        return SimConfig()

    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        """The cameras (built only when the world renders): a fixed ``overview`` looking at
        the table from :attr:`overview_eye` and, on a single Panda, a ``wrist`` camera (see
        :func:`magma_core.simulation.envs.cameras.default_cameras`)."""
        return default_cameras(self, eye=self.overview_eye, target=self.overview_target)

    @property
    def _default_human_render_camera_configs(self) -> CameraConfig:
        """``render_camera`` (512 x 512 unless configured): where the ``overview`` camera is,
        for pictures of the whole scene (rendered videos use it)."""
        pose = sapien_utils.look_at(eye=list(self.overview_eye), target=list(self.overview_target))
        return CameraConfig("render_camera", pose, 512, 512, 1, 0.01, 100)

    def _clear(self) -> None:
        if self.backend.sim_backend not in CPU_SIM_BACKENDS:
            super()._clear()  # its full gc.collect() releases GPU memory
        else:
            # ManiSkill's _clear without its gc.collect(): on CPU the old scene goes by
            # reference counting (and the next automatic collection), and a full collection
            # of a torch-sized heap was 80% of a fresh scene's cost (see SimBatch.fresh_scene).
            self._close_viewer()
            self.agent = None
            self._sensors = dict()
            self._human_render_cameras = dict()
            self.scene = None
            self._hidden_objects = []
        self._observed_actors = {}
        self._actor_shapes = {}

    def _load_scene(self, options: dict) -> None:
        """Build the table and ground. Subclasses call this first, then build their objects."""
        if self.use_table:
            self.table_scene = TableSceneBuilder(self, robot_init_qpos_noise=0)
            self.table_scene.build()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        """Reset the table and robots for ``env_idx``. Subclasses call this first."""
        with torch.device(self.device):
            if self.use_table:
                self.table_scene.table.set_pose(TABLE_POSE)
            self._initialize_robots(env_idx)

    # -- builders --------------------------------------------------------------------------
    def build_box(
        self,
        name: str,
        half_size: float | Sequence[float],
        color: Sequence[float] = (0.8, 0.2, 0.2, 1.0),
        *,
        body_type: str = "dynamic",
        initial_xy: Sequence[float] = (0.0, 0.0),
        initial_z: float | None = None,
        collision: bool = True,
        observe: bool = True,
        kind: str = "object",
    ) -> Actor:
        """A box actor resting on the table (``initial_z`` defaults to its half height).

        ``half_size`` is one number (a cube) or three. ``observe=True`` puts its pose in
        ``obs["extra"][name]``. Its shape, colour and ``kind`` are kept for replays
        (:attr:`actor_shapes`).
        """
        if body_type not in BODY_TYPES:
            raise ValueError(f"body_type must be one of {BODY_TYPES}, got {body_type!r}")
        half = [float(half_size)] * 3 if np.isscalar(half_size) else [float(v) for v in half_size]
        z = half[2] if initial_z is None else float(initial_z)
        pose = sapien.Pose(p=[float(initial_xy[0]), float(initial_xy[1]), z])
        actor = ms_actors.build_box(
            self.scene,
            half_sizes=half,
            color=list(color),
            name=name,
            body_type=body_type,
            add_collision=collision,
            initial_pose=pose,
        )
        if observe:
            self.observe_pose(name, actor)
        self._actor_shapes[name] = {
            "shape": "box", "half_size": half, "color": [float(c) for c in color], "kind": kind
        }
        return actor

    def build_zone(
        self,
        name: str,
        *,
        center_xy: Sequence[float] = (0.0, 0.0),
        half_size: Sequence[float] = (0.06, 0.06),
        color: Sequence[float] = (0.2, 0.7, 0.2, 1.0),
        thickness: float = 0.002,
        collision: bool = False,
        observe: bool = True,
    ) -> Actor:
        """A flat kinematic zone lying on the table; visual-only unless ``collision=True``.

        Without collision an object placed on the zone rests on the table through it.
        """
        return self.build_box(
            name,
            (float(half_size[0]), float(half_size[1]), thickness / 2),
            color,
            body_type="kinematic",
            initial_xy=center_xy,
            collision=collision,
            observe=observe,
            kind="zone",
        )

    @property
    def actor_shapes(self) -> dict[str, JSONDict]:
        """Name → shape (``box`` with ``half_size``), colour and kind (``object``/``zone``)
        of every actor built with :meth:`build_box` or :meth:`build_zone`."""
        return {name: dict(shape) for name, shape in self._actor_shapes.items()}

    def observe_pose(self, name: str, actor: Actor) -> None:
        """Put ``actor``'s pose ``[N, 7]`` into ``obs["extra"][name]``."""
        self._observed_actors[name] = actor

    @property
    def observed_actors(self) -> dict[str, Actor]:
        """Name → actor for the poses exported in ``obs["extra"]``."""
        return dict(self._observed_actors)

    # -- observations, evaluation, reward ---------------------------------------------------
    def tcp_poses(self) -> dict[str, MSPose]:
        """Robot name → TCP pose (the ``tcp`` link, else the last link)."""
        out = {}
        for name, agent in self.agents.items():
            tcp = getattr(agent, "tcp", None)
            out[name] = tcp.pose if tcp is not None else agent.robot.links[-1].pose
        return out

    def _get_obs_extra(self, info: dict) -> dict[str, torch.Tensor]:
        extra = {name: actor.pose.raw_pose for name, actor in self._observed_actors.items()}
        tcps = list(self.tcp_poses().values())
        extra["tcp"] = tcps[0].raw_pose
        if len(tcps) > 1:
            for i, pose in enumerate(tcps):
                extra[f"tcp_{i}"] = pose.raw_pose
        if self.extra_state_in_obs:
            for key, value in self.get_magma_extra_state().items():
                if isinstance(value, torch.Tensor):
                    extra.setdefault(key, value)
        return extra

    def evaluate(self) -> dict:
        return {}

    def compute_dense_reward(self, obs: object, action: torch.Tensor, info: dict) -> torch.Tensor:
        return torch.zeros(self.num_envs, device=self.device)

    def compute_normalized_dense_reward(
        self, obs: object, action: torch.Tensor, info: dict
    ) -> torch.Tensor:
        return self.compute_dense_reward(obs, action, info) / 5

    # -- extra state --------------------------------------------------------------------------
    def get_magma_extra_state(self) -> StateTree:
        """Non-physical world state to keep in snapshots (leaves ``[N, ...]``). Default: none."""
        return {}

    def set_magma_extra_state(self, state: StateTree) -> None:
        """Restore what :meth:`get_magma_extra_state` returned. Default: nothing."""

    def get_state_dict(self) -> dict:
        state = super().get_state_dict()
        extra = self.get_magma_extra_state()
        if extra:
            layout = getattr(self, "_magma_extra_layout", None)
            self._magma_extra_layout = _check_batched(
                extra, self.num_envs, ("magma_extra_state",), layout)
            state["magma_extra_state"] = extra
        return state

    def set_state_dict(self, state: dict, env_idx: torch.Tensor | None = None) -> None:
        state = dict(state)
        extra = state.pop("magma_extra_state", None)
        if not self.gpu_sim_enabled and "articulations" in state:
            self._set_articulations_cpu(state.pop("articulations"))
        super().set_state_dict(state, env_idx)
        if extra is None:
            return
        if env_idx is not None:
            merged = self.get_magma_extra_state()
            _write_rows(merged, extra, torch.as_tensor(env_idx))
            extra = merged
        self.set_magma_extra_state(extra)

    def _set_articulations_cpu(self, articulations: Mapping[str, torch.Tensor]) -> None:
        """Set articulation states as ManiSkill does, but leave a root pose that already
        matches (within 1e-6) untouched: PhysX reads a written root pose back with float32
        rounding, so rewriting it would break exact snapshot round trips."""
        registry = self.scene.state_dict_registry.articulations
        for name, value in articulations.items():
            art = registry[name]
            row = (value[0] if value.dim() == 2 else value).detach().cpu().numpy()
            current = art.pose.raw_pose[0].detach().cpu().numpy()
            if np.abs(row[:7] - current).max() > 1e-6:
                art.set_root_pose(sapien.Pose(row[0:3], row[3:7]))
            art.set_root_linear_velocity(row[7:10])
            art.set_root_angular_velocity(row[10:13])
            qpos, qvel = np.split(row[13 : 13 + art.max_dof * 2], 2)
            art.set_qpos(qpos)
            art.set_qvel(qvel)


def _check_batched(tree: Mapping, num_envs: int, path: tuple[str, ...],
                   layout: dict | None = None) -> dict:
    """Every tensor leaf of the extra state must lead with the batch dimension, be finite,
    and keep the shape and dtype it had at the first call (``layout``, which is returned)."""
    out: dict = {}
    for key, value in tree.items():
        here = (*path, key)
        name = "/".join(map(str, here))
        known = (layout or {}).get(key)
        if isinstance(value, Mapping):
            out[key] = _check_batched(value, num_envs, here,
                                      known if isinstance(known, dict) else None)
            continue
        if not isinstance(value, torch.Tensor):
            continue
        if value.dim() == 0 or value.shape[0] != num_envs:
            raise ValueError(
                f"get_magma_extra_state returned {name} of shape {list(value.shape)}; "
                f"leaves need a leading batch dimension of {num_envs}"
            )
        if isinstance(known, tuple) and known != (tuple(value.shape), value.dtype):
            raise ValueError(
                f"get_magma_extra_state returned {name} of shape {list(value.shape)} and dtype "
                f"{value.dtype}, expected {list(known[0])} and {known[1]} (as at its first call)"
            )
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise ValueError(f"get_magma_extra_state returned non-finite values in {name}")
        out[key] = (tuple(value.shape), value.dtype)
    if layout:
        out = {**layout, **out}
    return out


def _write_rows(target: dict, rows: Mapping, env_idx: torch.Tensor) -> None:
    """``target[leaf][env_idx] = rows[leaf]`` for every tensor leaf of ``rows``."""
    for key, value in rows.items():
        if isinstance(value, Mapping):
            _write_rows(target[key], value, env_idx)
        elif isinstance(value, torch.Tensor):
            leaf = target[key]
            leaf[env_idx.to(leaf.device)] = value.to(device=leaf.device, dtype=leaf.dtype)


class DefaultMultiAgentEnv(DefaultEnv):
    """``DefaultEnv`` for several robots (the predecessor's name): ``robot_uids`` is a tuple
    (default two Pandas), robots are named ``"<uid>-<i>"``, and on GPU the simulation gets
    more contact memory."""

    def __init__(self, *args: object, robot_uids: tuple[str, ...] = ("panda", "panda"),
                 **kwargs: object) -> None:
        super().__init__(*args, robot_uids=robot_uids, **kwargs)

    @property
    def _default_sim_config(self) -> SimConfig:
        config = SimConfig()
        config.gpu_memory_config.max_rigid_patch_count = 2**19
        config.gpu_memory_config.max_rigid_contact_count = 2**21
        return config
