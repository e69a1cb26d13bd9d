"""The warehouse presets, each with the reference trace that solves it optimally.

| preset | what it exercises |
| --- | --- |
| ``MoveOrder`` | a move order with a deadline in tool calls (one arm) |
| ``TwoOrders`` | two orders, one per arm, in the same decisions |
| ``HandOver`` | a box to the other side: a hand-over slot between the arms (two stages) |
| ``Swap`` | two boxes change sides through both hand-over slots, both arms every decision |
| ``Jammed`` | an injected jam of panda-0: its pick fails until ``clear_jam`` (forgiven) |
| ``Stock`` | a question about stock after a move, checked by a judge (needs ``--judge``) |
"""

from __future__ import annotations

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.tasks import BaseTask, MessageEvent, PerfectTrace, UserEvent
from magma_scenarios.common.stages import AnswerQuestion
from magma_scenarios.warehouse import plans
from magma_scenarios.warehouse.plans import events, pick, place
from magma_scenarios.warehouse.stages import ANY_HANDOVER, Deliver
from magma_scenarios.warehouse.tools import Jam, WarehouseTools
from magma_scenarios.warehouse.world import BOXES, ENV_ID, SLOTS

ATTRIBUTES = {"objects": list(BOXES), "slots": list(SLOTS)}


class _Warehouse(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = WarehouseTools
    situation_init = SituationInit(ATTRIBUTES)
    randomized_config_path = "randomization.yaml"


class MoveOrder(_Warehouse):
    """Move the red box to dock_a within three tool calls (two are needed)."""

    TEXT = "Move the red_box to dock_a within 3 tool calls."
    stages = [Deliver({"red_box": "dock_a"}, TEXT, 2, 3, True)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([UserEvent(self.TEXT), *events(plans.move("red_box", "shelf_a1", "dock_a")),
                             MessageEvent("The red_box is in dock_a.")])


class TwoOrders(_Warehouse):
    """One order per arm, worked on in the same decisions."""

    TEXT = "Move the blue_box to dock_a and the yellow_box to dock_b."
    stages = [Deliver({"blue_box": "dock_a", "yellow_box": "dock_b"}, TEXT, 4, None, True)]

    def perfect_trace(self) -> PerfectTrace:
        a, b = "panda-0", "panda-1"
        return PerfectTrace([
            UserEvent(self.TEXT),
            *events([[pick(a, "blue_box"), pick(b, "yellow_box")],
                     [place(a, "dock_a"), place(b, "dock_b")]]),
            MessageEvent("The blue_box is in dock_a and the yellow_box in dock_b."),
        ])


class HandOver(_Warehouse):
    """The red box goes to panda-1's dock: panda-0 leaves it in a hand-over slot first."""

    TEXT = "Send the red_box to dock_b."
    stages = [Deliver({"red_box": ANY_HANDOVER}, TEXT, 2),
              Deliver({"red_box": "dock_b"}, None, 2, None, True)]

    def perfect_trace(self) -> PerfectTrace:
        plan = plans.move("red_box", "shelf_a1", "dock_b", via="handover_1")
        return PerfectTrace([UserEvent(self.TEXT), *events(plan), MessageEvent("The red_box is in dock_b.")])


class Swap(_Warehouse):
    """The red box (side A) and the green box (side B) change places."""

    TEXT = "Swap the red_box and the green_box."
    stages = [Deliver({"red_box": ANY_HANDOVER, "green_box": ANY_HANDOVER}, TEXT, 4),
              Deliver({"red_box": "shelf_b1", "green_box": "shelf_a1"}, None, 4, None, True)]

    def perfect_trace(self) -> PerfectTrace:
        there, back = plans.swap("red_box", "shelf_a1", "green_box", "shelf_b1")
        return PerfectTrace([UserEvent(self.TEXT), *events(there + back),
                             MessageEvent("The red_box is in shelf_b1 and the green_box in shelf_a1.")])


class Jammed(_Warehouse):
    """panda-0 is jammed for the stage: its first pick fails (forgiven) until clear_jam."""

    TEXT = "Move the blue_box to dock_a."
    stages = [Deliver({"blue_box": "dock_a"}, TEXT, 2, None, True, errors=[Jam("panda-0")],
                      extra_calls=1)]

    def perfect_trace(self) -> PerfectTrace:
        a = "panda-0"
        return PerfectTrace([
            UserEvent(self.TEXT),
            *events([[pick(a, "blue_box")], [(a, "clear_jam", {})], [pick(a, "blue_box")],
                     [place(a, "dock_a")]]),
            MessageEvent("The blue_box is in dock_a (panda-0 was jammed; I cleared it)."),
        ])


class Stock(_Warehouse):
    """After a move, the user asks how many boxes stand on panda-1's side; a judge checks."""

    TEXT = "Move the yellow_box to dock_b."
    QUESTION = "How many boxes are on panda-1's side now, and where?"
    RULE = ("The answer says that the fact is: panda-1's side holds two boxes, the green_box "
            "in shelf_b1 and the yellow_box in dock_b.")
    stages = [Deliver({"yellow_box": "dock_b"}, TEXT, 2),
              AnswerQuestion(QUESTION, RULE)]

    def perfect_trace(self) -> PerfectTrace:
        return PerfectTrace([
            UserEvent(self.TEXT), *events(plans.move("yellow_box", "shelf_b2", "dock_b")),
            UserEvent(self.QUESTION),
            MessageEvent("panda-1's side holds two boxes, the green_box in shelf_b1 and the "
                         "yellow_box in dock_b."),
        ])
