"""How a task's world is created (``InitializationParameters``) and what describes it
(``TaskMetadata``, ``TaskStyle``).

World options come in two kinds:

* ``env_options``: given to the world when it is built (``gym.make`` keyword arguments,
  e.g. ``num_cubes`` of the sorting world, ``control_mode``). A key the world's constructor
  does not take is passed on to every episode's reset instead, as the predecessor did with
  all of them (``SimBatch`` sorts them and logs which keys went where).
* ``reset_options``: given to every episode's ``reset(options=...)``; the world reads them in
  ``_load_scene`` / ``_initialize_episode(env_idx, options)``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

logger = logging.getLogger(__name__)

#: The predecessor's placeholder robot name list, replaced by the world's robot names.
DEFAULT_AGENT_NAMES = ["default"]
#: The predecessor's planner options (accepted and kept; MAGMA plans motion in-process).
DEFAULT_PLANNER_OPTIONS = {
    "robot": "panda_v2",
    "joint_vel_limit": 0.9,
    "joint_acc_limit": 0.9,
    "control_timesteps": 0,
}


@dataclass
class InitializationParameters:
    """How the world is created: construction options, per-episode reset options, the robots'
    names (``None``, or the predecessor's ``["default"]``: the world's own names, in its
    order) and ``planner_options`` (kept for code written for the predecessor's external
    planner; MAGMA's in-process motion does not read them)."""

    env_options: dict[str, object] | None = None
    planner_options: dict[str, object] | None = None
    agent_names: list[str] | None = None
    reset_options: dict[str, object] | None = None

    def __post_init__(self) -> None:
        for name in ("env_options", "reset_options"):
            value = getattr(self, name)
            if value is None:
                setattr(self, name, {})
            elif not isinstance(value, dict):
                raise TypeError(f"InitializationParameters.{name} must be a dict or None")
        if self.planner_options is None:
            self.planner_options = dict(DEFAULT_PLANNER_OPTIONS)
        if not isinstance(self.planner_options, dict):
            raise TypeError("InitializationParameters.planner_options must be a dict or None")
        if self.agent_names is not None:
            if not isinstance(self.agent_names, (list, tuple)) or not all(
                isinstance(n, str) and n for n in self.agent_names
            ):
                raise TypeError(
                    "InitializationParameters.agent_names must be a list of non-empty str or None"
                )
            if len(set(self.agent_names)) != len(self.agent_names):
                raise TypeError("InitializationParameters.agent_names must be unique")
            self.agent_names = list(self.agent_names)

    def resolve_agent_names(self, world_names: list[str], task_name: str = "") -> list[str]:
        """The robot names a run uses: ``agent_names``, or the world's own names when it is
        None or the predecessor's ``["default"]`` (replaced with a logged notice)."""
        names = self.agent_names
        if names == DEFAULT_AGENT_NAMES and list(world_names) != DEFAULT_AGENT_NAMES:
            logger.warning(
                "task %s: agent_names=['default'] replaced by the world's robot names %s",
                task_name or "?", list(world_names),
            )
            return list(world_names)
        if names is None:
            return list(world_names)
        if len(names) != len(world_names):
            raise ValueError(
                f"Task {task_name!r} names {len(names)} robots {names} but the world has "
                f"{len(world_names)}: {list(world_names)}"
            )
        return list(names)


class TaskStyle(StrEnum):
    """Curriculum tags of the predecessor (descriptive only)."""

    LONG_STAGE = "long_stage"
    MEMORY_COHERENCE = "memory_coherence"
    CONSTRAINED = "constrained"
    MULTI_ROBOT = "multi_robot"
    DETECTION_TASK = "detection_task"
    COLOR_REASONING = "color_reasoning"
    INTERUPTION = "interuption"  # the predecessor's spelling, kept for its code


@dataclass
class TaskMetadata:
    """Free-form description of a task for front ends (no effect on a run).

    ``approximal_difficulty`` and ``coaching_hint`` are the predecessor's names of
    ``difficulty`` and ``hint``; either may be given, both read the same value.
    """

    styles: list[TaskStyle | str] = field(default_factory=list)
    difficulty: str | None = None
    hint: str | None = None

    def __init__(
        self,
        styles: list[TaskStyle | str] | None = None,
        difficulty: str | None = None,
        hint: str | None = None,
        *,
        approximal_difficulty: str | None = None,
        coaching_hint: str | None = None,
    ) -> None:
        self.styles = list(styles or [])
        self.difficulty = _one_of("difficulty", difficulty, approximal_difficulty)
        self.hint = _one_of("hint", hint, coaching_hint)

    @property
    def approximal_difficulty(self) -> str | None:
        return self.difficulty

    @property
    def coaching_hint(self) -> str | None:
        return self.hint


def _one_of(name: str, ours: str | None, theirs: str | None) -> str | None:
    if ours is not None and theirs is not None and ours != theirs:
        raise TypeError(f"TaskMetadata got two different values for {name}: {ours!r}, {theirs!r}")
    return ours if ours is not None else theirs
