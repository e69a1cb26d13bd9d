"""The sorting scenario's skills: ``sort_all`` and ``clear_zone``, one call at a time.

Both re-detect the table between moves (``detect_objects``), so a cube moved by someone else
meanwhile is taken into account; a failed call ends the skill with the call's message.
"""

from __future__ import annotations

import re

from magma_core.simulation.skills import BaseSkill, CallTick, MessTick, RobotToolStatus, SkillSpec

_LOCATED = re.compile(r"(\w+) \(([^)]*)\)")


def located(message: str) -> dict[str, str]:
    """``detect_objects``' message → ``{object: area or "on the table"}``."""
    return dict(_LOCATED.findall(message))


class _MoveCubes(BaseSkill, require_spec=False):
    """Move the cubes ``_todo`` selects to ``area``: detect, pick, place, re-detect, …"""

    def _todo(self, where: dict[str, str]) -> list[str]:
        raise NotImplementedError

    def _area(self) -> str:
        return str(self.arguments["area"])

    def start(self) -> CallTick | MessTick:
        self.phase, self.moved, self.remaining = "detect", [], []
        return CallTick("detect_objects", {})

    def tick(self, status: RobotToolStatus) -> CallTick | MessTick:
        if not status.result:
            return MessTick(f"{self.spec.name} stopped: {status.mess}", False, status.error_flag)
        if self.phase == "detect":
            self.remaining = self._todo(located(status.mess))
            if not self.remaining:
                return self._done()
            self.phase = "pick"
            return CallTick("pick", {"object": self.remaining[0]})
        if self.phase == "pick":
            self.phase = "place"
            return CallTick("place", {"area": self._area()})
        self.moved.append(self.remaining.pop(0))
        if not self.remaining:
            return self._done()
        self.phase = "detect"
        return CallTick("detect_objects", {})

    def _done(self) -> MessTick:
        if not self.moved:
            return MessTick(f"Nothing to move: {self._summary()}.")
        return MessTick(f"Moved {', '.join(self.moved)} to {self._area()}: {self._summary()}.")


class SortAll(_MoveCubes):
    """``sort_all(color, area)``: every cube of the colour(s) (or ``all``) into ``area``."""

    spec = SkillSpec(
        "sort_all",
        "Put every cube of a colour in an area, one cube at a time.",
        ["detect_objects", "pick", "place"],
        {
            "color": {"description": "a cube colour (e.g. red), several separated by commas, "
                      "or all", "type": "str", "required": True},
            "area": {"description": "the area to put the cubes in", "type": "str",
                     "required": True},
        },
    )

    def _colors(self) -> list[str]:
        return [c.strip().lower() for c in str(self.arguments["color"]).split(",") if c.strip()]

    def _todo(self, where: dict[str, str]) -> list[str]:
        colors = self._colors()
        return [
            name for name, at in where.items()
            if at != self._area() and ("all" in colors or name.split("_")[0] in colors)
        ]

    def _summary(self) -> str:
        colors = self._colors()
        which = "" if "all" in colors else " " + " and ".join(colors)
        return f"every{which} cube is in {self._area()}"


class ClearZone(_MoveCubes):
    """``clear_zone(zone, area)``: every cube in ``zone`` moved to ``area``."""

    spec = SkillSpec(
        "clear_zone",
        "Move every cube out of a zone into another area, one cube at a time.",
        ["detect_objects", "pick", "place"],
        {
            "zone": {"description": "the zone to clear", "type": "str", "required": True},
            "area": {"description": "where to put its cubes", "type": "str", "required": True},
        },
    )

    def _todo(self, where: dict[str, str]) -> list[str]:
        return [name for name, at in where.items() if at == self.arguments["zone"]]

    def _summary(self) -> str:
        return f"{self.arguments['zone']} is clear"


SKILLS: dict[str, type[BaseSkill]] = {"sort_all": SortAll, "clear_zone": ClearZone}
