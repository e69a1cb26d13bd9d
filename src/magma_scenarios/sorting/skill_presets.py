"""Sorting presets that run with skills (their own ``skills``), each with a perfect trace.

| preset | what it exercises |
| --- | --- |
| ``SkillSortAll`` | one ``sort_all`` call moves three cubes (nine internal calls) |
| ``SkillQuestion`` | the user asks a question mid-sort; the answer is a message, the sort resumes |
| ``SkillNewTarget`` | the user changes the target mid-sort: cancel, then a new ``sort_all`` |
| ``SkillStop`` | the user says stop mid-sort: cancel; the cubes stay where they are |
| ``SkillTwoArms`` | ``panda-0`` sorts; the user asks ``panda-1`` for something meanwhile, and
  ``panda-0``'s work goes on alongside ``panda-1``'s calls |

In the interruption presets the first stage ends when the first cube is in place, while
``sort_all`` still has work: the next instruction interrupts it (the work is suspended).
"""

from __future__ import annotations

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import SituationInit, ToolCall
from magma_core.simulation.tasks import (
    BaseTask,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from magma_core.simulation.tasks.perfect_trace import TraceEvent
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.sorting.skills import ClearZone, SortAll
from magma_scenarios.sorting.tools import SortingTools
from magma_scenarios.sorting.world import DUO_ENV_ID, ENV_ID, cube_names, zone_names

ROBOT = "panda"
REQUEST = "Put every cube in zone_c."


def _call(tool: str, arguments: JSONDict, robot: str = ROBOT) -> ToolCallEvent:
    return ToolCallEvent([ToolCall(tool, arguments, robot)])


def _sort_all(color: str, area: str, robot: str = ROBOT) -> ToolCallEvent:
    return _call("sort_all", {"color": color, "area": area}, robot)


def _cancel(robot: str = ROBOT) -> ToolCallEvent:
    return _call("cancel_current_action", {}, robot)


class _SkillSorting(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = SortingTools
    situation_init = SituationInit({"objects": cube_names(3), "areas": zone_names(3)})
    #: The skills the preset runs with (the engine's default; ``--skills`` overrides).
    skills = (SortAll, ClearZone)
    randomized_config_path = "randomization.yaml"


def _first_cube_stage() -> ObjectsToZones:
    """``REQUEST`` asked; the stage ends with the red cube in zone_c (detect, pick, place)."""
    return ObjectsToZones({"red_cube": "zone_c"}, REQUEST, moves=1, extra_calls=1)


def _all_in(zone: str) -> dict[str, str]:
    """The three cubes, each in ``zone``."""
    return {cube: zone for cube in ("red_cube", "green_cube", "blue_cube")}


def _interrupted(instruction: str, *answer: TraceEvent) -> PerfectTrace:
    """``REQUEST`` answered by ``sort_all``; ``instruction`` interrupts it; ``answer`` follows."""
    return PerfectTrace([UserEvent(REQUEST), _sort_all("all", "zone_c"), UserEvent(instruction),
                         *answer])


class SkillSortAll(_SkillSorting):
    """One ``sort_all`` call: detect, pick, place, re-detect, … for the three cubes."""

    stages = [ObjectsToZones(_all_in("zone_c"), REQUEST, True, extra_calls=3)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([UserEvent(REQUEST), _sort_all("all", "zone_c"),
                             MessageEvent("Every cube is in zone_c.")])


class SkillQuestion(_SkillSorting):
    """Mid-sort the user asks what the robot is doing; a message answers, the sort goes on."""

    QUESTION = "What are you doing right now?"
    stages = [
        _first_cube_stage(),
        ObjectsToZones(_all_in("zone_c"), QUESTION, True, moves=2, extra_calls=2),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return _interrupted(
            self.QUESTION,
            MessageEvent("I am putting every cube in zone_c; the red one is done."),
            MessageEvent("Every cube is in zone_c."),
        )


class SkillNewTarget(_SkillSorting):
    """Mid-sort the user changes the target to zone_a: cancel, then a new ``sort_all``."""

    CHANGE = "Actually, put every cube in zone_a instead."
    stages = [
        _first_cube_stage(),
        ObjectsToZones(_all_in("zone_a"), CHANGE, True, extra_calls=3),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return _interrupted(self.CHANGE, _cancel(), _sort_all("all", "zone_a"),
                            MessageEvent("Every cube is in zone_a."))


class SkillStop(_SkillSorting):
    """Mid-sort the user says stop: cancel; nothing else moves (no call in that stage)."""

    STOP = "Stop! Leave the other cubes where they are."
    stages = [
        _first_cube_stage(),
        ObjectsToZones({"red_cube": "zone_c"}, STOP, True, moves=0),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return _interrupted(self.STOP, _cancel(),
                            MessageEvent("I stopped; only the red cube is in zone_c."))


class SkillTwoArms(_SkillSorting):
    """``panda-0`` sorts its cubes into zone_a; meanwhile ``panda-1`` is asked to move the
    green cube to zone_b: its pick and place run beside ``panda-0``'s resumed work."""

    maniskill_env_id = DUO_ENV_ID
    situation_init = SituationInit({"objects": cube_names(4), "areas": zone_names(3)})
    REQUEST = "panda-0: put the red and blue cubes in zone_a."
    ASIDE = "panda-1: put the green cube in zone_b."
    stages = [
        ObjectsToZones({"red_cube": "zone_a"}, REQUEST, moves=1, extra_calls=1),
        ObjectsToZones(
            {"red_cube": "zone_a", "blue_cube": "zone_a", "green_cube": "zone_b"},
            ASIDE,
            True,
            moves=2,
            extra_calls=1,
        ),
    ]

    def perfect_trace(self) -> PerfectTrace:
        a, b = "panda-0", "panda-1"
        return PerfectTrace(
            [
                UserEvent(self.REQUEST),
                _sort_all("red, blue", "zone_a", a),
                UserEvent(self.ASIDE),
                _call("pick", {"object": "green_cube"}, b),
                _call("place", {"area": "zone_b"}, b),
                ToolCallEvent([]),  # nothing new: panda-0's sort goes on
                MessageEvent("The red and blue cubes are in zone_a, the green one in zone_b."),
            ]
        )
