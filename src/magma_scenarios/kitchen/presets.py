"""The kitchen scenario's presets, each with the reference trace that solves it optimally.

| preset | what it exercises |
| --- | --- |
| ``FetchFromDrawer`` | an object hidden in a closed drawer: open, pick, place on the counter, close |
| ``PutAwayCups`` | put both cups in the box: open the lid, two moves (one stage each), close |
| ``LatchedBox`` | the box's lid is latched (extra state): unlatch, open, put a block in |
| ``WhatIsInside`` | a question about a closed drawer's content: open, look, answer |
| ``DrawerRule`` | "never leave a drawer open", then a move out of a drawer; a drawer closed by
  someone else at a stage's entry |
"""

from __future__ import annotations

from magma_core.json_types import JSONValue
from magma_core.simulation.data_structures import SituationInit, ToolCall
from magma_core.simulation.tasks import (
    BaseTask,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from magma_scenarios.common.stages import Acknowledge
from magma_scenarios.kitchen.questions import LookInside
from magma_scenarios.kitchen.skills import Fetch
from magma_scenarios.kitchen.stages import CloseAtEntry, KitchenStage
from magma_scenarios.kitchen.tools import KitchenTools
from magma_scenarios.kitchen.world import ENV_ID, OBJECTS, PLACES

ATTRIBUTES = {"objects": [o.name for o in OBJECTS], "places": list(PLACES)}


def call(tool: str, **arguments: JSONValue) -> ToolCallEvent:
    """One decision with one call."""
    return ToolCallEvent([ToolCall(tool, arguments)])


class _Kitchen(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = KitchenTools
    situation_init = SituationInit(ATTRIBUTES)
    randomized_config_path = "randomization.yaml"


class FetchFromDrawer(_Kitchen):
    """The red sponge is in the closed drawer_left: bring it to the counter, close the drawer."""

    REQUEST = "Bring me the red_sponge from drawer_left and close the drawer again."
    stages = [KitchenStage(REQUEST, 4, {"red_sponge": "counter"}, {"drawer_left": "closed"},
                           flag_answer_to_user=True)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.REQUEST),
            call("open", target="drawer_left"),
            call("pick", object="red_sponge"),
            call("place", location="counter"),
            call("close", target="drawer_left"),
            MessageEvent("The red_sponge is on the counter and drawer_left is closed."),
        ])


class PutAwayCups(_Kitchen):
    """Both cups into the box (one stage per cup), then the lid closed."""

    REQUEST = "Put away both cups in the box, then close its lid."
    stages = [
        KitchenStage(REQUEST, 3, {"red_cup": "box"}),
        KitchenStage(None, 3, {"red_cup": "box", "blue_cup": "box"}, {"box": "closed"},
                     flag_answer_to_user=True),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.REQUEST),
            call("open", target="box"),
            call("pick", object="red_cup"),
            call("place", location="box"),
            call("pick", object="blue_cup"),
            call("place", location="box"),
            call("close", target="box"),
            MessageEvent("Both cups are in the box and its lid is closed."),
        ])


class LatchedBox(_Kitchen):
    """The lid is latched (nothing in the physics shows it): unlatch, open, put a block in."""

    REQUEST = "Put the green_block in the box."
    stages = [KitchenStage(REQUEST, 4, {"green_block": "box"}, flag_answer_to_user=True,
                           entry_transition=CloseAtEntry("box", latch=True))]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.REQUEST),
            call("unlatch"),
            call("open", target="box"),
            call("pick", object="green_block"),
            call("place", location="box"),
            MessageEvent("The green_block is in the box."),
        ])


class WhatIsInside(_Kitchen):
    """What is in drawer_right? Only opening it tells (bowl_b, holding the green sponge)."""

    QUESTION = "What is in drawer_right?"
    stages = [LookInside(QUESTION, "drawer_right holds bowl_b, with the green_sponge in it",
                         calls=2)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.QUESTION),
            call("open", target="drawer_right"),
            call("detect_objects"),
            MessageEvent("Drawer_right holds bowl_b, with the green_sponge in it."),
        ])


class DrawerRule(_Kitchen):
    """drawer_left is closed by someone else between two requests (an entry transition);
    then a rule (never leave a drawer open) that the last request must keep."""

    FIRST = "Put the yellow_block in drawer_left."
    SECOND = "Now take the red_sponge out of drawer_left and put it in bowl_a."
    RULE = "From now on, never leave a drawer open."
    THIRD = "Put the yellow_block back on the counter."
    stages = [
        KitchenStage(FIRST, 3, {"yellow_block": "drawer_left"}, flag_answer_to_user=True),
        KitchenStage(SECOND, 3, {"red_sponge": "bowl_a"}, flag_answer_to_user=True,
                     entry_transition=CloseAtEntry("drawer_left")),
        Acknowledge(RULE),
        KitchenStage(THIRD, 3, {"yellow_block": "counter"}, {"drawer_left": "closed"},
                     flag_answer_to_user=True),
    ]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.FIRST),
            call("open", target="drawer_left"),
            call("pick", object="yellow_block"),
            call("place", location="drawer_left"),
            MessageEvent("The yellow_block is in drawer_left."),
            UserEvent(self.SECOND),
            call("open", target="drawer_left"),  # someone closed it meanwhile
            call("pick", object="red_sponge"),
            call("place", location="bowl_a"),
            MessageEvent("The red_sponge is in bowl_a."),
            UserEvent(self.RULE),
            MessageEvent("Understood: I will close every drawer I open."),
            UserEvent(self.THIRD),
            call("pick", object="yellow_block"),
            call("place", location="counter"),
            call("close", target="drawer_left"),
            MessageEvent("The yellow_block is on the counter and drawer_left is closed."),
        ])


class SkillFetch(_Kitchen):
    """One ``fetch`` call finds the red sponge (look, open drawer_left, look) and brings it."""

    REQUEST = "Fetch the red_sponge and put it on the counter."
    skills = (Fetch,)
    stages = [KitchenStage(REQUEST, 5, {"red_sponge": "counter"}, flag_answer_to_user=True)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.REQUEST),
            call("fetch", object="red_sponge", location="counter"),
            MessageEvent("The red_sponge is on the counter."),
        ])
