"""Skills at run time, the data: the skill API of a task and each slot's skill state.

``SkillAPI`` is what the agent can call when skills are on: ``cancel_current_action``, the
task's skills, and every plain tool as a one-call skill (``MonoToolSkill``). ``SkillSlotState`` is the
skill part of a slot's state: the skill running on each robot (with its next call, if it
waits for one) and the work suspended by an interruption. ``clone()`` copies it whole (skill
instances included), so saving and restoring a slot restores its skills; ``to_dict`` /
``skill_state_from_dict`` serialise it for slot snapshots (a skill's instance attributes must
then be plain values: strings, numbers, lists, dicts, tuples).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from magma_core.json_types import JSONDict
from magma_core.serialization import decode_value, encode_value
from magma_core.simulation.skills import (
    CANCEL_CURRENT_ACTION,
    BaseSkill,
    CallTick,
    CancelCurrentActionSkill,
    agent_tools,
    build_mono_tool_skill_class,
)

FREE = "FREE"


class SkillAPI:
    """The skills a task's agent may call, by name (see the module docstring).

    Raises ``ValueError`` for a skill named ``cancel_current_action`` or like a tool, a skill
    that needs a tool the task does not have, or two skills with one name.
    """

    def __init__(self, tool_descriptions: Sequence[JSONDict], skills: Iterable[type[BaseSkill]]):
        tools = {t["name"]: t for t in tool_descriptions}
        skills = list(skills)
        self.classes: dict[str, type[BaseSkill]] = {CANCEL_CURRENT_ACTION: CancelCurrentActionSkill}
        for cls in skills:
            if not (isinstance(cls, type) and issubclass(cls, BaseSkill)):
                raise ValueError(f"{cls!r} is not a BaseSkill subclass")
            name = cls.spec.name
            if name == CANCEL_CURRENT_ACTION:
                raise ValueError(f"{CANCEL_CURRENT_ACTION} is a reserved skill name")
            if name in self.classes:
                raise ValueError(f"two skills are named {name!r}")
            missing = [t for t in cls.spec.required_tools if t not in tools]
            if missing:
                raise ValueError(f"skill {name!r} needs tools the task does not have: {missing}")
            if name in tools:
                raise ValueError(f"skill {name!r} has the name of a tool")
            self.classes[name] = cls
        for name, tool in tools.items():
            self.classes[name] = build_mono_tool_skill_class(tool)
        self._agent_tools = agent_tools(list(tools.values()), skills)

    def descriptions(self) -> list[JSONDict]:
        """The agent's tools list: one entry per skill (``skills.agent_tools``)."""
        return copy.deepcopy(self._agent_tools)


@dataclass
class RunningSkill:
    """One skill call on one robot: the instance and its next tool call (None: not started)."""

    name: str
    arguments: JSONDict
    robot: str
    skill: BaseSkill
    pending: CallTick | None = None
    started: bool = False

    def label(self) -> str:
        """``name(k=v, ...)`` as shown in ``robot_statuses``."""
        args = ", ".join(f"{k}={v}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


@dataclass
class SkillSlotState:
    """The skill part of a slot's state (see the module docstring).

    ``running``: robot → its running skill. ``suspended``: robot → work suspended by an
    interruption (it resumes, or is cancelled, on the agent's answer). ``before_resume``: the
    state just before suspended work resumed, put back if the resumed work fails the stage.
    """

    running: dict[str, RunningSkill] = field(default_factory=dict)
    suspended: dict[str, RunningSkill] = field(default_factory=dict)
    before_resume: SkillSlotState | None = None

    def clone(self) -> SkillSlotState:
        """A deep copy (skill instances included)."""
        return copy.deepcopy(self)

    def busy(self, robot: str | None) -> RunningSkill | None:
        """The skill running or suspended on ``robot``, if any."""
        return self.running.get(robot or "") or self.suspended.get(robot or "")

    def has_work(self) -> bool:
        return bool(self.running or self.suspended)

    def clear(self) -> None:
        self.running.clear()
        self.suspended.clear()
        self.before_resume = None

    def statuses(self, robots: Sequence[str]) -> dict[str, str]:
        """``{robot: "FREE" | "RUNNING name(args)"}``; suspended work counts as running."""
        out = {}
        for robot in robots:
            work = self.busy(robot)
            out[robot] = FREE if work is None else f"RUNNING {work.label()}"
        return out

    def suspend(self) -> None:
        """Suspend all running work (an interruption arrived)."""
        self.suspended.update(self.running)
        self.running.clear()

    def resume(self) -> None:
        """Resume all suspended work; remember the state before, for a rollback."""
        if not self.suspended:
            return
        self.before_resume = SkillSlotState(
            running=copy.deepcopy(self.running), suspended=copy.deepcopy(self.suspended)
        )
        self.running.update(self.suspended)
        self.suspended.clear()

    def to_data(self) -> JSONDict:
        """JSON-compatible data (see :func:`skill_state_from_data`); nothing is evaluated."""
        return {
            "running": {r: _work_to_data(w) for r, w in self.running.items()},
            "suspended": {r: _work_to_data(w) for r, w in self.suspended.items()},
            "before_resume": None if self.before_resume is None else self.before_resume.to_data(),
        }

    def to_dict(self) -> JSONDict:
        """A readable summary (for records and the tool tester)."""
        return {
            "running": {r: w.label() for r, w in self.running.items()},
            "suspended": {r: w.label() for r, w in self.suspended.items()},
        }


def _work_to_data(work: RunningSkill) -> JSONDict:
    pending = work.pending
    return {
        "name": work.name,
        "arguments": encode_value(work.arguments),
        "robot": work.robot,
        "started": work.started,
        "pending": None if pending is None else [pending.tool_name, encode_value(pending.arguments)],
        "skill": encode_value(dict(vars(work.skill))),
    }


def _work_from_data(data: JSONDict, api: SkillAPI) -> RunningSkill:
    cls = api.classes.get(data["name"])
    if cls is None:
        raise ValueError(f"the snapshot runs skill {data['name']!r}, which this task does not have")
    skill = cls.__new__(cls)
    vars(skill).update(decode_value(data["skill"]))
    pending = data["pending"]
    return RunningSkill(
        name=data["name"],
        arguments=decode_value(data["arguments"]),
        robot=data["robot"],
        skill=skill,
        pending=None if pending is None else CallTick(pending[0], decode_value(pending[1])),
        started=bool(data["started"]),
    )


def skill_state_from_data(data: JSONDict, api: SkillAPI) -> SkillSlotState:
    """The inverse of ``SkillSlotState.to_data`` for the skills ``api`` knows."""
    before = data.get("before_resume")
    return SkillSlotState(
        running={r: _work_from_data(w, api) for r, w in data["running"].items()},
        suspended={r: _work_from_data(w, api) for r, w in data["suspended"].items()},
        before_resume=None if before is None else skill_state_from_data(before, api),
    )
