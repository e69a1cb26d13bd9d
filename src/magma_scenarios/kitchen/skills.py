"""The kitchen's skill: ``fetch(object, location)``, one call at a time.

It looks (``detect_objects``); while the object is not in sight it opens the next closed
drawer or lid (in ``JOINTS`` order; a latched lid is unlatched first) and looks again; then
it picks the object and puts it in ``location``. It closes nothing. A failed call ends the
skill with the call's message.
"""

from __future__ import annotations

import re

from magma_core.simulation.skills import BaseSkill, CallTick, MessTick, RobotToolStatus, SkillSpec
from magma_scenarios.kitchen.world import JOINTS

_LOCATED = re.compile(r"(\w+) \(([^)]*)\)")


def located(message: str) -> dict[str, str]:
    """``detect_objects``' message → ``{name: place or open/closed}``."""
    return dict(_LOCATED.findall(message))


class Fetch(BaseSkill, require_spec=False):
    """``fetch(object, location)``: find the object (opening what may hide it), bring it."""

    spec = SkillSpec(
        "fetch",
        "Bring an object to a place from wherever it is, opening drawers or the box to find it.",
        ["detect_objects", "open", "unlatch", "pick", "place"],
        {
            "object": {"description": "the object to fetch", "type": "str", "required": True},
            "location": {"description": "where to put it", "type": "str", "required": True},
        },
    )

    def start(self) -> CallTick | MessTick:
        self.phase, self.tried = "look", []
        return CallTick("detect_objects", {})

    def tick(self, status: RobotToolStatus) -> CallTick | MessTick:
        obj, where = str(self.arguments["object"]), str(self.arguments["location"])
        if self.phase == "open" and not status.result and "latched" in status.mess:
            self.phase = "unlatch"
            return CallTick("unlatch", {})
        if self.phase == "unlatch" and status.result:
            self.phase = "open"
            return CallTick("open", {"target": self.tried[-1]})
        if not status.result:
            return MessTick(f"fetch stopped: {status.mess}", False, status.error_flag)
        if self.phase == "look":
            seen = located(status.mess)
            if obj in seen:
                self.phase = "pick"
                return CallTick("pick", {"object": obj})
            closed = [j for j in JOINTS if seen.get(j) == "closed" and j not in self.tried]
            if not closed:
                return MessTick(f"fetch stopped: the {obj} is nowhere to be seen.", False)
            self.tried.append(closed[0])
            self.phase = "open"
            return CallTick("open", {"target": closed[0]})
        if self.phase == "open":
            self.phase = "look"
            return CallTick("detect_objects", {})
        if self.phase == "pick":
            self.phase = "place"
            return CallTick("place", {"location": where})
        return MessTick(f"Fetched the {obj}: it is in {where}." if where != "counter"
                        else f"Fetched the {obj}: it is on the counter.")


SKILLS: dict[str, type[BaseSkill]] = {"fetch": Fetch}
