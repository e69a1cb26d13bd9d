"""``SkillSpec``, the ticks, ``BaseSkill``, ``MonoToolSkill`` and the reserved cancel skill.

A skill's life: the engine builds ``SkillCls(arguments)`` (a fresh instance per call, so it
may keep state), sets ``robot``, calls ``start()``, runs each ``CallTick`` as one tool call on
that robot, and passes the result to ``tick(status)``; a ``MessTick`` ends the skill and is
what the agent sees. Example::

    class Wave(BaseSkill):
        spec = SkillSpec("wave", "Wave twice.", ["move"], {})

        def start(self):
            self.left = 2
            return CallTick("move", {"to": "up"})

        def tick(self, status):
            self.left -= 1
            if not status.result or self.left == 0:
                return MessTick("Waved." if status.result else status.mess, status.result)
            return CallTick("move", {"to": "up"})
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import ClassVar, cast

from magma_core.json_types import JSONDict, JSONValue
from magma_core.simulation.data_structures import ToolErrorFlag

#: The reserved skill name that cancels the robot's running (or suspended) action.
CANCEL_CURRENT_ACTION = "cancel_current_action"


@dataclass(frozen=True)
class SkillSpec:
    """What the agent sees of a skill: name, description and arguments (the tools' format).

    ``required_tools`` are the real tool names the skill calls (the task must have them).
    """

    name: str
    description: str
    required_tools: list[str] = field(default_factory=list)
    argument_schema: dict[str, JSONDict] = field(default_factory=dict)

    def to_dict(self) -> JSONDict:
        """The entry of the agent's tools list (same keys as a tool's API description)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {k: dict(v) for k, v in self.argument_schema.items()},
        }


@dataclass(frozen=True)
class CallTick:
    """The skill's next tool call on its robot."""

    tool_name: str
    arguments: JSONDict = field(default_factory=dict)


@dataclass(frozen=True)
class MessTick:
    """The skill is finished; ``message`` (with ``result``: success or not) goes to the agent."""

    message: str
    result: bool = True
    error_flag: ToolErrorFlag = ToolErrorFlag.NONE


@dataclass(frozen=True)
class RobotToolStatus:
    """The result of the skill's last tool call: ``result`` (ok), ``mess`` (the message)."""

    tool_name: str
    result: bool
    mess: str
    error_flag: ToolErrorFlag = ToolErrorFlag.NONE


Tick = CallTick | MessTick


class BaseSkill(abc.ABC):
    """A multi-step behaviour on one robot; subclasses define their own ``spec``.

    ``arguments`` are the agent's (already checked against ``spec.argument_schema``);
    ``robot`` is the robot the skill runs on (set by the engine before ``start``).
    """

    spec: ClassVar[SkillSpec]

    def __init_subclass__(cls, require_spec: bool = True, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if require_spec and not isinstance(cls.__dict__.get("spec"), SkillSpec):
            raise TypeError(f"skill {cls.__name__} must define its own `spec = SkillSpec(...)`")

    def __init__(self, arguments: JSONDict | None = None) -> None:
        self.arguments: JSONDict = dict(arguments or {})
        self.robot: str | None = None

    @abc.abstractmethod
    def start(self) -> Tick:
        """The first tick: a tool call, or a message when there is nothing to do."""

    @abc.abstractmethod
    def tick(self, status: RobotToolStatus) -> Tick:
        """React to the result of the last call: the next call, or the final message."""


class MonoToolSkill(BaseSkill, require_spec=False):
    """A plain tool as a one-call skill: the tool's result is the skill's message."""

    def start(self) -> Tick:
        return CallTick(self.spec.name, dict(self.arguments))

    def tick(self, status: RobotToolStatus) -> Tick:
        return MessTick(status.mess, status.result, status.error_flag)


def build_mono_tool_skill_class(tool: JSONDict) -> type[MonoToolSkill]:
    """The ``<name>MonoToolSkill`` class of a tool's API description (name, description,
    parameters)."""
    spec = SkillSpec(
        name=str(tool["name"]),
        description=str(tool.get("description", "")),
        required_tools=[str(tool["name"])],
        argument_schema=cast(dict[str, JSONDict], dict(_mapping(tool.get("parameters") or {}))),
    )
    return type(f"{spec.name}MonoToolSkill", (MonoToolSkill,), {"spec": spec})


def _mapping(value: JSONValue) -> JSONDict:
    if not isinstance(value, dict):
        raise TypeError(f"a tool's parameters are a mapping, got {type(value).__name__}")
    return value


class CancelCurrentActionSkill(BaseSkill):
    """``cancel_current_action()``: stops the robot's running or suspended action.

    The engine handles it itself; the tick methods are never called.
    """

    spec = SkillSpec(
        CANCEL_CURRENT_ACTION,
        "Cancel the action currently running (or suspended) on the robot.",
        [],
        {},
    )

    def start(self) -> Tick:
        raise RuntimeError("cancel_current_action is handled by the engine")

    def tick(self, status: RobotToolStatus) -> Tick:
        raise RuntimeError("cancel_current_action is handled by the engine")


def agent_tools(tool_descriptions: list[JSONDict],
                skills: list[type[BaseSkill]] | tuple[type[BaseSkill], ...]) -> list[JSONDict]:
    """The agent's tools list when a task runs with ``skills``: ``cancel_current_action``, each
    skill, then every plain tool as a one-call skill (the engine's list, in its order; a
    randomized names is drawn over it)."""
    classes = [CancelCurrentActionSkill, *skills,
               *(build_mono_tool_skill_class(tool) for tool in tool_descriptions)]
    return [cls.spec.to_dict() for cls in classes]
