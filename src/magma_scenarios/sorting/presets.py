"""The sorting scenario's presets, each with the reference trace that solves it optimally.

| preset | what it exercises |
| --- | --- |
| ``SortAll`` | one request over three stages (later stages have an ``EmptyInstruction``) |
| ``Interruption`` | a direct instruction after an action stage, then the work resumes |
| ``NewZone`` | an additive stage: "add zone C to your known areas" (an ADD attribute edit) |
| ``GraspError`` | an injected grasp error; the failed call is forgiven |
| ``Question`` | a text-only question validated by a judge (needs ``--judge``) |
| ``TwoArms`` | two Pandas side by side, each sorting its cubes, calls in the same decisions |
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
from magma_scenarios.common.stages import AddArea, AnswerQuestion, ObjectsToZones
from magma_scenarios.sorting.tools import GraspSlip, SortingTools
from magma_scenarios.sorting.world import DUO_ENV_ID, ENV_ID, cube_names, zone_names

ROBOT = "panda"


def _calls(*calls: tuple[str, str, JSONDict]) -> ToolCallEvent:
    """One decision: ``(robot, tool, arguments)`` per call."""
    return ToolCallEvent([ToolCall(tool, arguments, robot) for robot, tool, arguments in calls])


def _move(obj: str, zone: str, robot: str = ROBOT) -> list[ToolCallEvent]:
    """The two decisions that move ``obj`` to ``zone``."""
    return [
        _calls((robot, "pick", {"object": obj})),
        _calls((robot, "place", {"area": zone})),
    ]


class _Sorting(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = SortingTools
    situation_init = SituationInit({"objects": cube_names(4), "areas": zone_names(3)})
    randomized_config_path = "randomization.yaml"


class SortAll(_Sorting):
    """One request, three stages: red to zone A, then green to B, then blue to C; an answer."""

    REQUEST = (
        "Sort the cubes: put the red cube in zone_a, then the green cube in zone_b, "
        "then the blue cube in zone_c."
    )
    stages = [
        ObjectsToZones({"red_cube": "zone_a"}, REQUEST),
        ObjectsToZones({"green_cube": "zone_b"}, None),
        ObjectsToZones({"blue_cube": "zone_c"}, None, True),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent(self.REQUEST),
                *_move("red_cube", "zone_a"),
                *_move("green_cube", "zone_b"),
                *_move("blue_cube", "zone_c"),
                MessageEvent("The red, green and blue cubes are in zones A, B and C."),
            ]
        )


class Interruption(_Sorting):
    """The user interrupts the red-and-blue request with an urgent green cube, then resumes."""

    stages = [
        ObjectsToZones(
            {"red_cube": "zone_a"}, "Put the red cube and then the blue cube in zone_a."
        ),
        ObjectsToZones({"green_cube": "zone_b"}, "Wait, first put the green cube in zone_b."),
        ObjectsToZones(
            {"red_cube": "zone_a", "blue_cube": "zone_a"},
            "Thanks. Now finish what you were doing.",
            True,
            moves=1,
        ),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Put the red cube and then the blue cube in zone_a."),
                *_move("red_cube", "zone_a"),
                UserEvent("Wait, first put the green cube in zone_b."),
                *_move("green_cube", "zone_b"),
                UserEvent("Thanks. Now finish what you were doing."),
                *_move("blue_cube", "zone_a"),
                MessageEvent("The red and blue cubes are in zone_a, the green one in zone_b."),
            ]
        )


class NewZone(_Sorting):
    """zone_c is not a known area until the agent adds it; then the yellow cube goes there."""

    situation_init = SituationInit(
        {"objects": cube_names(4), "areas": zone_names(2)},
        all_task_attributes={"objects": cube_names(4), "areas": zone_names(3)},
    )
    stages = [
        AddArea("zone_c", "Add zone_c to your known areas."),
        ObjectsToZones({"yellow_cube": "zone_c"}, "Put the yellow cube in zone_c.", True),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Add zone_c to your known areas."),
                _calls((ROBOT, "add_area", {"area": "zone_c"})),
                UserEvent("Put the yellow cube in zone_c."),
                *_move("yellow_cube", "zone_c"),
                MessageEvent("The yellow cube is in zone_c."),
            ]
        )


class GraspError(_Sorting):
    """The first grasp slips (an injected error); retrying is forgiven, so still OPTIMAL."""

    stages = [
        ObjectsToZones(
            {"red_cube": "zone_b"}, "Put the red cube in zone_b.", True, errors=[GraspSlip()]
        )
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Put the red cube in zone_b."),
                _calls((ROBOT, "pick", {"object": "red_cube"})),  # slips: injected, forgiven
                *_move("red_cube", "zone_b"),
                MessageEvent("The red cube is in zone_b."),
            ]
        )


class Question(_Sorting):
    """After moving the blue cube, the user asks where it is; a judge checks the answer."""

    QUESTION = "In which zone is the blue cube now?"
    stages = [
        ObjectsToZones({"blue_cube": "zone_a"}, "Put the blue cube in zone_a."),
        AnswerQuestion(QUESTION, "The answer says that the blue cube is in zone_a (zone A)."),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace(
            [
                UserEvent("Put the blue cube in zone_a."),
                *_move("blue_cube", "zone_a"),
                UserEvent(self.QUESTION),
                MessageEvent("The blue cube is in zone_a."),
            ]
        )


class TwoArms(_Sorting):
    """Two Pandas side by side; each sorts the cubes of its side, in the same decisions.

    ``panda-0`` reaches ``zone_a`` and ``zone_c``, ``panda-1`` reaches ``zone_b`` and ``zone_c``.
    """

    maniskill_env_id = DUO_ENV_ID
    REQUEST = (
        "panda-0: put the red cube in zone_a and the blue cube in zone_c. "
        "panda-1: put the green cube and the yellow cube in zone_b."
    )
    stages = [
        ObjectsToZones(
            {"red_cube": "zone_a", "green_cube": "zone_b", "blue_cube": "zone_c",
             "yellow_cube": "zone_b"},
            REQUEST,
            True,
        )
    ]

    def perfect_trace(self) -> PerfectTrace:
        a, b = "panda-0", "panda-1"
        return PerfectTrace(
            [
                UserEvent(self.REQUEST),
                _calls((a, "pick", {"object": "red_cube"}), (b, "pick", {"object": "green_cube"})),
                _calls((a, "place", {"area": "zone_a"}), (b, "place", {"area": "zone_b"})),
                _calls((a, "pick", {"object": "blue_cube"}), (b, "pick", {"object": "yellow_cube"})),
                _calls((a, "place", {"area": "zone_c"}), (b, "place", {"area": "zone_b"})),
                MessageEvent("All four cubes are sorted."),
            ]
        )
