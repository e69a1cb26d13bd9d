"""The buttons scenario's presets, each with the reference trace that solves it optimally."""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit, ToolCall
from magma_core.simulation.stage import ConstraintBaseStage
from magma_core.simulation.tasks import (
    BaseTask,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from magma_scenarios.buttons.stages import (
    ButtonsStage,
    LightOffAtEntry,
    LightOn,
    NeverPressed,
    PressedInOrder,
)
from magma_scenarios.buttons.tools import ButtonTools
from magma_scenarios.buttons.world import BUTTONS, DUO_ENV_ID, ENV_ID

ATTRIBUTES = {"buttons": list(BUTTONS)}


def _press(button: str, robot: str = "panda") -> ToolCall:
    return ToolCall("press", {"button": button}, robot)


def _one(*calls: ToolCall) -> ToolCallEvent:
    return ToolCallEvent(list(calls))


class _ButtonsTask(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = ButtonTools
    situation_init = SituationInit(ATTRIBUTES)


SEQUENCE_TEXT = "Press the red, then the blue, then the green button."


class Sequence(_ButtonsTask):
    """Press three buttons in a given order, then tell the user."""

    stages = [
        ButtonsStage(
            [PressedInOrder(["red", "blue", "green"])],
            "The red, blue and green buttons were pressed in that order.",
            SEQUENCE_TEXT,
            presses=3,
            flag_answer_to_user=True,
        )
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(SEQUENCE_TEXT),
            _one(_press("red")),
            _one(_press("blue")),
            _one(_press("green")),
            MessageEvent("Done: red, blue, then green."),
        ])


LIGHT_TEXT = "Turn the green light on."
LIGHT_AGAIN_TEXT = "The green light just went out. Turn it back on."


class LightOut(_ButtonsTask):
    """Turn the green light on; a transition turns it off before the next stage; again."""

    stages = [
        ButtonsStage([LightOn("green")], "The green light is on.", LIGHT_TEXT, presses=1),
        ButtonsStage(
            [LightOn("green")],
            "The green light is on again.",
            LIGHT_AGAIN_TEXT,
            presses=1,
            entry_transition=LightOffAtEntry("green"),
        ),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(LIGHT_TEXT),
            _one(_press("green")),
            UserEvent(LIGHT_AGAIN_TEXT),
            _one(_press("green")),
        ])


RULE_TEXT = "A rule for today: never press the red button."
ALL_LIGHTS_TEXT = "Turn on every light you are allowed to."


class RedRule(_ButtonsTask):
    """A rule stage (never press red, judged), then light every other light without red."""

    stages = [
        ConstraintBaseStage(RULE_TEXT),
        ButtonsStage(
            [LightOn("green"), LightOn("blue"), LightOn("yellow"), NeverPressed("red")],
            "The green, blue and yellow lights are on; red was never pressed.",
            ALL_LIGHTS_TEXT,
            presses=3,
        ),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(RULE_TEXT),
            MessageEvent("Understood: I will never press the red button."),
            UserEvent(ALL_LIGHTS_TEXT),
            _one(_press("green")),
            _one(_press("blue")),
            _one(_press("yellow")),
        ])


TWO_TEXT = "Turn the red and the yellow lights on, both at once."
REACH = {"panda-0": ["red", "green"], "panda-1": ["blue", "yellow"]}


class TwoRobots(_ButtonsTask):
    """Two Pandas at a long panel press red and yellow in the same decision."""

    maniskill_env_id = DUO_ENV_ID
    tools_constant: dict[str, object] = {"reach": REACH}
    stages = [
        ButtonsStage(
            [LightOn("red"), LightOn("yellow")],
            "The red and yellow lights are on.",
            TWO_TEXT,
            presses=2,
        )
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(TWO_TEXT),
            _one(_press("red", "panda-0"), _press("yellow", "panda-1")),
        ])
