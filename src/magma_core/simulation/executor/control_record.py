"""Control-rate recording (opt-in): every control step's joint state and commanded action.

The engine's records are per decision (a tool call moves the arm for hundreds of control
steps); a robot-learning dataset wants the steps themselves. :class:`ControlRecorder` wraps
the simulator an :class:`~magma_core.simulation.executor.Executor` runs on
(``Executor(..., record_control=True)``) and, at each ``step_physics`` call, keeps for every
slot that steps, *before* the step: each robot's joint positions (``qpos``), the command sent
to it (``action``: the ``pd_joint_pos`` arm targets and the gripper's ±1), and the slot's
compact world state (:func:`~magma_core.simulation.executor.world.world_state`, what a camera
needs to render the step afterwards). Whatever steps physics (motion, skills) is recorded; a
slot whose world is put back (``restore_slot``: a planner retry, ``reset_at_end``, a
snapshot) marks its next step ``restored``, and a reset starts the slot afresh.

Off by default: without ``record_control`` the executor runs on the simulator itself, so
recording costs nothing. Drivers drain a slot's steps with :meth:`ControlRecorder.take`
after each ``submit`` (the run loop stores them per decision).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from magma_core.simulation.executor.world import world_state

__all__ = ["ControlRecorder", "control_rate"]


def control_rate(sim: Any) -> float | None:
    """The control frequency (Hz) of ``sim``'s world (ManiSkill's ``control_freq``), None
    when the simulator cannot say."""
    envs = getattr(sim, "envs", None)
    env = envs[0] if envs else None
    freq = getattr(getattr(env, "unwrapped", env), "control_freq", None)
    return float(freq) if freq else None


def _row(value: Any, slot: int) -> list[float]:
    """Row ``slot`` of a ``[N, d]`` tensor/array (a ``[d]`` one is every slot's) as floats."""
    data = value.detach().cpu() if hasattr(value, "detach") else value
    data = data.tolist() if hasattr(data, "tolist") else list(data)
    if data and isinstance(data[0], list):
        data = data[slot]
    return [float(v) for v in data]


class ControlRecorder:
    """The simulator ``sim`` with every control step recorded per slot (see the module).

    Every member of ``sim`` is reachable through it, so the engine and the motion layer run
    on it unchanged."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim
        self._steps: dict[int, list[dict[str, Any]]] = {}
        self._restored: set[int] = set()
        self.robot_names: list[str] = list(getattr(sim, "robot_names", []) or sim.robots(0))
        self.rate = control_rate(sim)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._sim, name)

    @property
    def wrapped(self) -> Any:
        """The simulator being recorded."""
        return self._sim

    # -- what is intercepted ---------------------------------------------------------------
    def step_physics(self, actions: Any, slots: Iterable[int] | None = None) -> None:
        """Record the state and command of each stepping slot, then step."""
        stepped = list(range(self._sim.num_slots)) if slots is None else sorted(set(slots))
        qpos = {name: self._sim.robot_qpos(name) for name in self.robot_names}
        commands = actions if isinstance(actions, Mapping) else {self.robot_names[0]: actions}
        for slot in stepped:
            step = {
                "qpos": {name: _row(q, slot) for name, q in qpos.items()},
                "action": {name: _row(a, slot) for name, a in commands.items()},
                "world": world_state(self._sim, slot),
            }
            if slot in self._restored:
                step["restored"] = True
                self._restored.discard(slot)
            self._steps.setdefault(slot, []).append(step)
        self._sim.step_physics(actions, slots=slots)

    def restore_slot(self, slot: int, snapshot: Any, *, seed: int | None = None) -> None:
        self._sim.restore_slot(slot, snapshot, seed=seed)
        self._restored.add(slot)

    def reset(self, seed: Any = None, slots: Iterable[int] | None = None) -> Any:
        out = self._sim.reset(seed=seed, slots=slots)
        for slot in range(self._sim.num_slots) if slots is None else slots:
            self._steps.pop(slot, None)
            self._restored.discard(slot)
        return out

    # -- what drivers read -----------------------------------------------------------------
    def take(self, slot: int) -> list[dict[str, Any]]:
        """The steps ``slot`` took since the last ``take`` (or its reset), oldest first:
        ``{"qpos": {robot: [...]}, "action": {robot: [...]}, "world": {...}}`` each, with
        ``"restored": True`` on the first step after its world was put back."""
        return self._steps.pop(slot, [])

    def joint_names(self) -> dict[str, list[str]]:
        """Each robot's active joint names, in ``qpos`` order (``j0``, ``j1``, ... when the
        simulator cannot say)."""
        out: dict[str, list[str]] = {}
        robots = self._sim.robots(0)
        for name in self.robot_names:
            qpos = _row(self._sim.robot_qpos(name), 0)
            joints = getattr(getattr(robots.get(name), "robot", None), "active_joints", None)
            names = [str(getattr(j, "name", "")) for j in joints] if joints else []
            out[name] = names if len(names) == len(qpos) and all(names) else [f"j{i}" for i in range(len(qpos))]
        return out
