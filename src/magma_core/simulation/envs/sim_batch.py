"""``SimBatch``: N env slots whose state can be read, edited, saved and restored slot by slot.

Whatever the backend, a ``SimBatch`` presents N slots with batched tensors (leading slot
dimension). On CPU (``physx_cpu``, which allows one env per instance) it holds N single-env
instances in this process and stacks their states and observations; with CUDA it holds one
env with ``num_envs=N`` on ``physx_cuda``. Per-slot save/restore is the primitive that
snapshots, reset-at-end, actor protection, retries and branching are built on.

States use ManiSkill's ``get_state_dict()`` layout (see :mod:`magma_core.simulation.state`);
observations are ManiSkill's ``state_dict`` observations (``obs["agent"]``, ``obs["extra"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from mani_skill.agents.base_agent import BaseAgent
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.utils.registration import REGISTERED_ENVS

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.state_tree import StateNode
from magma_core.simulation.envs import world_view
from magma_core.simulation.envs.cameras import camera_images, render_unavailable
from magma_core.simulation.envs.direct_drive import DirectDrive
from magma_core.simulation.envs.headless import backend_kwargs
from magma_core.simulation.envs.scene_release import SceneRelease
from magma_core.simulation.envs.world_options import split_world_options
from magma_core.simulation.state import (
    StateTree,
    clone_state,
    map_state,
    select_slot,
    stack_states,
)

__all__ = ["RobotHandle", "SimBatch", "WorldSnapshot"]

Actions = torch.Tensor | Mapping[str, torch.Tensor]
FIRST_RESET_ATTEMPTS = 4  # seeds a slot tries when the world's reset raises while building


@dataclass(frozen=True)
class WorldSnapshot:
    """One slot's saved world (env state only: a state tree whose leaves have a leading dim
    of 1); the whole slot, engine state included, is the executor's ``SlotSnapshot``.

    Holds actors, articulations and ``magma_extra_state`` exactly as read; restoring it with
    :meth:`SimBatch.restore_slot` round-trips them bit for bit.
    """

    state: StateTree

    @classmethod
    def from_state(cls, batched_state: Mapping[str, StateNode], slot: int) -> WorldSnapshot:
        """Copy row ``slot`` of a batched state (e.g. from :meth:`SimBatch.get_state`)."""
        return cls(select_slot(batched_state, slot))

    def clone(self) -> WorldSnapshot:
        return WorldSnapshot(clone_state(self.state))


class SimBatch:
    """N env slots of one registered env id (see the module docstring).

    Args:
        env_id: a registered ManiSkill env id (import the module that registers it first,
            e.g. ``magma_scenarios.cube.env``).
        num_slots: N.
        seed: seed of the first reset; slot ``i`` gets ``seed + i``.
        env_options: extra ``gym.make`` keyword arguments (``control_mode``, ``robot_uids``,
            ...). ``obs_mode`` defaults to ``"state_dict"``; backends default to this
            machine's (see :mod:`~magma_core.simulation.envs.headless`). A key the world's
            constructor does not take is a reset option instead (see ``world_options``).
        reset_options: ``options`` of every episode's ``reset`` (the world reads them in
            ``_initialize_episode``).
        backend: ``"cpu"``, ``"gpu"`` or ``"auto"`` (GPU when CUDA is available).
        fresh_scene: on CPU, start every episode of a slot whose physics has stepped in a
            freshly built PhysX scene (ManiSkill's ``reconfigure``), so that an episode's
            worlds do not depend on what the slot ran before: PhysX keeps contact, friction
            and sleep state that a state restore does not reset (poses drift by millimetres).
            Costs one scene build per episode (about 0.1 s; see ``benchmarks/sim_overhead.py``).
            Robots handed out by :meth:`robots` stay valid across rebuilds; the old scenes
            are collected every N rebuilds (:mod:`.scene_release`), so memory stays bounded
            over any number of episodes. Ignored on GPU.
        render: build the worlds with a render backend and their cameras, so that
            :meth:`camera_images` can render them (when a render device is there; see
            :func:`~magma_core.simulation.envs.cameras.render_unavailable`). Off by default:
            a batch that renders nothing pays nothing for cameras.
    """

    def __init__(
        self,
        env_id: str,
        num_slots: int,
        *,
        seed: int | Sequence[int] | None = 0,
        env_options: Mapping[str, object] | None = None,
        backend: str = "auto",
        reset_options: Mapping[str, object] | None = None,
        fresh_scene: bool = True,
        render: bool = False,
    ) -> None:
        if num_slots < 1:
            raise ValueError(f"num_slots must be >= 1, got {num_slots}")
        if backend == "auto":
            backend = "gpu" if torch.cuda.is_available() else "cpu"
        if backend not in ("cpu", "gpu"):
            raise ValueError(f"backend must be 'auto', 'cpu' or 'gpu', got {backend!r}")
        if env_id not in REGISTERED_ENVS:
            raise ValueError(
                f"env {env_id!r} is not registered: import the module that registers it "
                "(a scenario's manifest lists it under environments)"
            )
        self.env_id = env_id
        self.num_slots = num_slots
        self.backend = backend
        if render and render_unavailable() is not None:
            raise ValueError(f"cannot render: {render_unavailable()}")
        options, moved = split_world_options(env_id, env_options or {})
        self.reset_options: dict[str, object] = {**moved, **dict(reset_options or {})}
        options.setdefault("obs_mode", "state_dict")
        for key, value in backend_kwargs(gpu=backend == "gpu", render=render).items():
            options.setdefault(key, value)
        self.env_options = options
        self.fresh_scene = bool(fresh_scene) and backend == "cpu"
        self.scene_release = SceneRelease(num_slots)  # the scenes rebuilds drop: <= N alive
        if backend == "gpu":
            self._envs: list[BaseEnv] = [_make(env_id, num_envs=num_slots, **options)]
        else:
            self._envs = [_make(env_id, num_envs=1, **options) for _ in range(num_slots)]
        first = self._envs[0]
        self.device = first.device
        self.robot_names: list[str] = list(
            getattr(first, "robot_names", None) or _agent_names(first)
        )
        """Robot names in index order: the agent uid for one robot (``"panda"``),
        ``"<uid>-<i>"`` for several (ManiSkill's multi-agent naming)."""
        # Per env: whether its physics stepped since its scene was built (a built scene
        # whose bodies were only placed, never simulated, is as good as a fresh one).
        self._stepped = [False] * len(self._envs)
        self._handles: dict[tuple[int, str], RobotHandle] = {}
        # CPU: per env, its agent and its motion path's direct control step (None: not plain)
        self._drives: dict[int, tuple[BaseAgent, DirectDrive | None]] = {}
        self._first_reset(seed)

    # -- access ----------------------------------------------------------------------------
    @property
    def envs(self) -> list[BaseEnv]:
        """The unwrapped envs: N single-env instances on CPU, one batched env on GPU."""
        return list(self._envs)

    @property
    def control_mode(self) -> str:
        mode = self._envs[0].control_mode
        return mode if isinstance(mode, str) else next(iter(mode.values()))

    def robots(self, slot: int = 0) -> dict[str, BaseAgent | RobotHandle]:
        """Robot name → the ManiSkill agent (robot) of ``slot`` (on GPU the batched agent).

        With ``fresh_scene`` each is a :class:`RobotHandle` that always reaches the agent of
        the slot's current scene (tools bound to it stay valid when the scene is rebuilt).
        """
        env = self._env_of(slot)
        if not self.fresh_scene:
            agent = env.agent
            if hasattr(agent, "agents_dict"):
                return dict(agent.agents_dict)
            return {self.robot_names[0]: agent}
        return {name: self._handle(slot, name) for name in self.robot_names}

    def _handle(self, slot: int, name: str) -> RobotHandle:
        key = (slot, name)
        if key not in self._handles:
            self._handles[key] = RobotHandle(lambda s=slot, n=name: _agent(self._env_of(s), n))
        return self._handles[key]

    def robot_name(self, robot: int | str) -> str:
        """Resolve a robot index or name to its name."""
        if isinstance(robot, str):
            if robot not in self.robot_names:
                raise KeyError(f"unknown robot {robot!r}; robots: {self.robot_names}")
            return robot
        if not 0 <= robot < len(self.robot_names):
            raise IndexError(f"robot index {robot} out of range for {self.robot_names}")
        return self.robot_names[robot]

    def robot_qpos(self, robot: int | str) -> torch.Tensor:
        """Joint positions ``[N, dof]`` of one robot in every slot."""
        name = self.robot_name(robot)
        return self._gather(lambda env: _agent(env, name).robot.get_qpos())

    def robot_base_pose(self, robot: int | str) -> torch.Tensor:
        """Root pose ``[N, 7]`` (xyz + wxyz) of one robot in every slot."""
        name = self.robot_name(robot)
        return self._gather(lambda env: _agent(env, name).robot.pose.raw_pose)

    def robot_links(self, slot: int) -> dict[str, JSONDict]:
        """Robot name → xyz of its links, fingers and TCP in ``slot`` (for replays)."""
        row = slot if self.backend == "gpu" else 0
        return world_view.link_positions(self._env_of(slot), row)

    def scene_geometry(self) -> JSONDict:
        """Shapes, colours and kinds of the world's actors, and its robots (for replays)."""
        return world_view.scene_geometry(self._envs[0])

    def camera_images(self, slot: int, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Camera name → RGB image (uint8 ``H x W x 3``) of ``slot`` now; ``{}`` when the
        batch was made without ``render`` or nothing can render here."""
        env = self._env_of(slot)
        if self.env_options.get("render_backend", "none") == "none":
            return {}
        return camera_images(env, slot if self.backend == "gpu" else 0, names)

    # -- state -----------------------------------------------------------------------------
    def get_state(self) -> StateTree:
        """The batched state (a fresh copy): actors, articulations, ``magma_extra_state``."""
        if self.backend == "gpu":
            return clone_state(self._envs[0].get_state_dict())
        return stack_states([env.get_state_dict() for env in self._envs])

    def set_state(self, state: Mapping[str, StateNode], slots: Iterable[int] | None = None) -> None:
        """Write rows ``slots`` (default all) of the batched ``state``; other slots keep theirs."""
        idx = self._slots(slots)
        if not idx:
            return
        if self.backend == "gpu":
            rows = torch.as_tensor(idx, device=self.device)
            self._envs[0].set_state_dict(map_state(state, lambda t: t[rows]), env_idx=rows)
            return
        for i in idx:
            self._envs[i].set_state_dict(map_state(state, lambda t, i=i: t[i : i + 1]))

    def save_slot(self, slot: int) -> WorldSnapshot:
        """A snapshot of one slot."""
        (slot,) = self._slots([slot])
        if self.backend == "gpu":
            return WorldSnapshot.from_state(self._envs[0].get_state_dict(), slot)
        return WorldSnapshot(clone_state(self._envs[slot].get_state_dict()))

    def restore_slot(self, slot: int, snapshot: WorldSnapshot, *, seed: int | None = None) -> None:
        """Put ``snapshot`` back into ``slot`` (any slot of this batch's env id).

        With ``seed`` (the seed of the episode the snapshot was taken in) and ``fresh_scene``,
        a slot whose physics has stepped gets a freshly built scene for that seed first, so the
        restored world goes on as it would in any slot, whatever this one ran before (PhysX's
        contact and solver caches are in no state); without ``seed`` (a restore within the
        slot's own episode) the scene is kept."""
        (slot,) = self._slots([slot])
        if self.backend == "gpu":
            rows = torch.as_tensor([slot], device=self.device)
            self._envs[0].set_state_dict(snapshot.state, env_idx=rows)
            return
        if seed is not None and self.fresh_scene and self._stepped[slot]:
            self._rebuild(slot, seed)
        self._envs[slot].set_state_dict(snapshot.state)

    # -- stepping --------------------------------------------------------------------------
    def reset(
        self,
        seed: int | Sequence[int | None] | None = None,
        slots: Iterable[int] | None = None,
    ) -> StateTree:
        """Start a new episode in ``slots`` (default all); returns the batched observation.

        ``seed``: None (continue each slot's RNG), an int (slot ``i`` gets ``seed + i``) or
        one seed per reset slot.
        """
        idx = self._slots(slots)
        if seed is None:
            seeds: list[int | None] = [None] * len(idx)
        elif isinstance(seed, int):
            seeds = [seed + i for i in idx]
        else:
            seeds = list(seed)
            if len(seeds) != len(idx):
                raise ValueError(f"{len(seeds)} seeds for {len(idx)} slots")
        if self.backend == "gpu":
            self._reset_gpu(idx, seeds)
        else:
            for i, s in zip(idx, seeds, strict=True):
                if self.fresh_scene and self._stepped[i]:
                    self._rebuild(i, s)
                else:
                    self._envs[i].reset(seed=s, options=dict(self.reset_options))
                self._stepped[i] = False
        return self.observe()

    def _rebuild(self, slot: int, seed: int | None) -> None:
        """Reset ``slot`` for ``seed`` in a freshly built scene (ManiSkill's ``reconfigure``);
        its old scene goes to :attr:`scene_release`, even when the world's reset raises."""
        try:
            self._envs[slot].reset(seed=seed, options={**self.reset_options, "reconfigure": True})
        finally:
            self.scene_release.dropped()
        self._stepped[slot] = False

    def _first_reset(self, seed: int | Sequence[int] | None) -> None:
        """The reset that gives every slot a world. A world whose reset raises for some seed
        (a scenario bug the engine turns into that episode's error) must not stop the batch
        being built: the failing slots try a few other seeds before the error propagates."""
        try:
            self.reset(seed=seed)
            return
        except Exception:
            if not isinstance(seed, int):
                raise
        if self.backend == "gpu":  # one batched reset: shift every slot's seed
            for attempt in range(1, FIRST_RESET_ATTEMPTS):
                try:
                    self.reset(seed=seed + attempt * self.num_slots)
                    return
                except Exception:
                    if attempt == FIRST_RESET_ATTEMPTS - 1:
                        raise
        for i in range(self.num_slots):
            for attempt in range(FIRST_RESET_ATTEMPTS):
                try:
                    self.reset(seed=[seed + i + attempt * self.num_slots], slots=[i])
                    break
                except Exception:
                    if attempt == FIRST_RESET_ATTEMPTS - 1:
                        raise

    def _reset_gpu(self, idx: list[int], seeds: list[int | None]) -> None:
        env = self._envs[0]
        options: dict[str, object] = dict(self.reset_options)
        if len(idx) != self.num_slots:
            options["env_idx"] = torch.as_tensor(idx, device=self.device)
        if all(s is None for s in seeds):
            env.reset(seed=None, options=options)
            return
        # ManiSkill replaces all episode seeds at once: keep the other slots' seeds.
        full = [int(s) for s in env._episode_seed]
        for i, s in zip(idx, seeds, strict=True):
            full[i] = full[i] if s is None else int(s)
        env.reset(seed=full, options=options)

    def observe(self) -> StateTree:
        """The batched ``state_dict`` observation (``obs["agent"]``, ``obs["extra"]``)."""
        if self.backend == "gpu":
            return self._envs[0].get_obs(unflattened=True)
        return stack_states([env.get_obs(unflattened=True) for env in self._envs])

    def step(
        self, actions: Actions
    ) -> tuple[StateTree, torch.Tensor, torch.Tensor, torch.Tensor, StateTree]:
        """One full control step of every slot, as ``env.step``.

        ``actions``: ``[N, A]``, or robot name → ``[N, A]`` with several robots. Returns
        batched ``(obs, reward, terminated, truncated, info)``.
        """
        self._stepped = [True] * len(self._envs)
        if len(self._envs) == 1:  # GPU, or one CPU slot: the env's own batch is ours
            return self._envs[0].step(actions)
        results = [env.step(_row(actions, i)) for i, env in enumerate(self._envs)]
        obs, reward, terminated, truncated, info = zip(*results, strict=True)
        return (
            stack_states(obs),
            torch.cat(reward),
            torch.cat(terminated),
            torch.cat(truncated),
            stack_states(info),
        )

    def step_physics(self, actions: Actions, slots: Iterable[int] | None = None) -> None:
        """One control step without evaluation, observation or reward (the motion path).

        Sets the controller actions and runs the physics substeps. On CPU only ``slots``
        (default all) advance; on GPU every slot advances, and rows outside ``slots`` must
        hold their robots' current commands.
        """
        if self.backend == "gpu":
            env = self._envs[0]
            env._step_action(actions)
            env._elapsed_steps += 1
            return
        for i in self._slots(slots):
            env = self._envs[i]
            row = _row(actions, i)
            drive = self._drive(i)
            if drive is not None and drive.accepts(row):
                drive.step(row)
            else:
                env._step_action(row)
            env._elapsed_steps += 1
            self._stepped[i] = True

    def _drive(self, i: int) -> DirectDrive | None:
        """Env ``i``'s direct control step (:mod:`.direct_drive`), rebuilt with its scene."""
        env = self._envs[i]
        agent, drive = self._drives.get(i, (None, None))
        if agent is not env.agent:
            agent, drive = self._drives[i] = (env.agent, DirectDrive.build(env))
        return drive

    def close(self) -> None:
        """Release every env."""
        for env in self._envs:
            env.close()
        self._envs = []

    def __enter__(self) -> SimBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------
    def _slots(self, slots: Iterable[int] | None) -> list[int]:
        if slots is None:
            return list(range(self.num_slots))
        idx = [int(s) for s in (slots.tolist() if isinstance(slots, torch.Tensor) else slots)]
        for s in idx:
            if not 0 <= s < self.num_slots:
                raise IndexError(f"slot {s} out of range for {self.num_slots} slots")
        return idx

    def _env_of(self, slot: int) -> BaseEnv:
        (slot,) = self._slots([slot])
        return self._envs[0] if self.backend == "gpu" else self._envs[slot]

    def _gather(self, read: Callable[[BaseEnv], torch.Tensor]) -> torch.Tensor:
        if self.backend == "gpu":
            return read(self._envs[0]).clone()
        return torch.cat([read(env) for env in self._envs], dim=0)


class RobotHandle:
    """A slot's robot that outlives scene rebuilds: attributes are read from (and written
    to) the ManiSkill agent of the slot's current scene."""

    __slots__ = ("_resolve",)

    def __init__(self, resolve: Callable[[], BaseAgent]) -> None:
        object.__setattr__(self, "_resolve", resolve)

    @property
    def agent(self) -> BaseAgent:
        """The agent of the current scene."""
        return self._resolve()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._resolve(), name, value)

    def __repr__(self) -> str:
        return f"RobotHandle({self._resolve()!r})"


def _make(env_id: str, **kwargs: object) -> BaseEnv:
    try:
        env = gym.make(env_id, **kwargs)
    except gym.error.NameNotFound as exc:
        raise KeyError(
            f"env {env_id!r} is not registered; import the module that registers it "
            "(e.g. magma_scenarios.cube.env) first"
        ) from exc
    return env.unwrapped


def _agent_names(env: BaseEnv) -> list[str]:
    agent = env.agent
    if hasattr(agent, "agents_dict"):
        return list(agent.agents_dict)
    return [agent.uid]


def _agent(env: BaseEnv, name: str) -> BaseAgent:
    agent = env.agent
    if hasattr(agent, "agents_dict"):
        return agent.agents_dict[name]
    return agent


def _row(actions: Actions, i: int) -> Actions:
    if isinstance(actions, Mapping):
        return {k: v[i : i + 1] for k, v in actions.items()}
    return actions[i : i + 1]
