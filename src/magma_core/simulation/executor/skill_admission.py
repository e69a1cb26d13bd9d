"""Skills at run time, the agent's answer: which calls start, which are refused, what is
cancelled, and whether suspended work resumes. Nothing here runs a tool.

The public messages (one per conflict):

* a robot that already runs an action: ``Impossible to launch X on robot R because Y is
  already running on it. You must use R.cancel_current_action() first.``
* a robot whose work is suspended: ``Impossible to launch X because another action is
  suspended on this robot. Use R.cancel_current_action() first.``
* cancelling and acting on one robot: ``Cannot cancel and start an action on the same robot
  in one answer.``
* cancelling with nothing to cancel: ``No action is currently running on this robot.``
* cancelling mixed with new actions while work is suspended: ``Submit
  cancel_current_action separately from new actions.``
"""

from __future__ import annotations

from dataclasses import dataclass, field

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import ToolErrorFlag
from magma_core.simulation.executor.normalize import NormalizedCall
from magma_core.simulation.executor.records import CallOutcome
from magma_core.simulation.executor.skill_state import RunningSkill, SkillAPI, SkillSlotState
from magma_core.simulation.skills import CANCEL_CURRENT_ACTION


@dataclass
class Admission:
    """What an answer's calls do: ``refused`` (nothing runs then), ``cancelled`` robots (with
    their skill labels), and the skills to ``start``."""

    refused: list[CallOutcome] = field(default_factory=list)
    cancelled: list[CallOutcome] = field(default_factory=list)
    start: list[RunningSkill] = field(default_factory=list)


def _refuse(call: NormalizedCall, robot: str | None, message: str) -> CallOutcome:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return CallOutcome(
        robot=robot,
        tool=call.name,
        arguments=arguments,
        ok=False,
        message=message,
        failure_flag=ToolErrorFlag.BAD_CALL,
        message_is_public=True,
    )


def _resolve_robot(call: NormalizedCall, robots: list[str]) -> tuple[str | None, str | None]:
    robot = call.target_robot_name
    if not robot:
        if len(robots) == 1:
            return robots[0], None
        return None, (
            f"No robot given for {call.name}. Please name one of the known robots: "
            f"{', '.join(robots)}."
        )
    if robot not in robots:
        return robot, f"Unknown robot {robot}. Please use only known robot names."
    return robot, None


def _check_arguments(schema: dict[str, JSONDict], arguments: JSONDict, name: str) -> str | None:
    unknown = sorted(set(arguments) - set(schema))
    if unknown:
        return f"Unknown argument(s) {unknown} for {name}. Expected: {sorted(schema)}."
    missing = [k for k, spec in schema.items() if spec.get("required", True) and k not in arguments]
    if missing:
        return f"Missing argument(s) {missing} for {name}."
    return None


def admit(
    api: SkillAPI, skills: SkillSlotState, calls: list[NormalizedCall], robots: list[str]
) -> Admission:
    """Check an answer's calls against the skill API and the robots' work (module docstring)."""
    out = Admission()
    cancels = [c for c in calls if c.name == CANCEL_CURRENT_ACTION]
    actions = [c for c in calls if c.name != CANCEL_CURRENT_ACTION]
    if skills.suspended and cancels and actions:
        out.refused = [
            _refuse(c, c.target_robot_name, "Submit cancel_current_action separately from new actions.")
            for c in calls
        ]
        return out
    cancel_robots: set[str] = set()
    for call in cancels:
        robot, problem = _resolve_robot(call, robots)
        if problem is None and call.error:
            problem = call.error
        if problem is None and robot in cancel_robots:
            problem = "No action is currently running on this robot."
        if problem is None and skills.busy(robot) is None:
            problem = "No action is currently running on this robot."
        if problem is not None:
            out.refused.append(_refuse(call, robot, problem))
            continue
        assert robot is not None
        cancel_robots.add(robot)
        work = skills.busy(robot)
        assert work is not None
        out.cancelled.append(
            CallOutcome(robot=robot, tool=CANCEL_CURRENT_ACTION, arguments={}, ok=True,
                        message=f"{work.label()} was cancelled.")
        )
    starting: dict[str, RunningSkill] = {}
    for call in actions:
        robot, problem = _resolve_robot(call, robots)
        cls = api.classes.get(call.name)
        if problem is None and call.error:
            problem = call.error
        if problem is None and cls is None:
            problem = f"{call.name} is not a known tool."
        if problem is None:
            assert cls is not None
            problem = _check_arguments(cls.spec.argument_schema, call.arguments, call.name)
        if problem is None and robot in cancel_robots:
            problem = "Cannot cancel and start an action on the same robot in one answer."
        if problem is None and robot in skills.suspended:
            problem = (
                f"Impossible to launch {call.name} because another action is suspended on "
                f"this robot. Use {robot}.cancel_current_action() first."
            )
        other = skills.running.get(robot or "") or starting.get(robot or "")
        if problem is None and other is not None:
            problem = (
                f"Impossible to launch {call.name} on robot {robot} because {other.name} is "
                f"already running on it. You must use {robot}.cancel_current_action() first."
            )
        if problem is not None:
            out.refused.append(_refuse(call, robot, problem))
            continue
        assert robot is not None and cls is not None
        skill = cls(dict(call.arguments))
        skill.robot = robot
        starting[robot] = RunningSkill(call.name, dict(call.arguments), robot, skill)
    out.start = list(starting.values())
    return out
