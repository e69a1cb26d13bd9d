"""Generation-time task state: what a task generator knows about the world between requests.

``TaskState`` holds the attributes the agent will see, its memory, the relations the
requests reason about (which object has which type, which object is in which area), free
``properties`` (forbidden objects and areas, generator counters) and the constraints applied
so far. ``RuleRenderer`` projects a state into rule texts ("never use zone_c").
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict, JSONValue

if TYPE_CHECKING:  # layer 2, named for the annotations only
    from magma_core.simulation.tasks.constraints import BaseConstraint

_PREVIEW = 6


def _default_relations() -> dict[str, dict[str, JSONValue]]:
    return {"object_type": {}, "type_area": {}, "object_area": {}}


def _default_properties() -> JSONDict:
    return {"forbidden_objects": [], "forbidden_areas": []}


class TaskState:
    """The latent state of a task being generated.

    Args:
        attributes: the agent-visible attributes (default ``{"objects": [], "target_areas": []}``).
        memory: the agent's initial memory.
        relations: ``{"object_type": {}, "type_area": {}, "object_area": {}}`` by default.
        properties: ``{"forbidden_objects": [], "forbidden_areas": []}`` by default.
        constraints_history: the ``BaseConstraint``s applied so far, in order.
    """

    def __init__(
        self,
        attributes: JSONDict | None = None,
        memory: JSONDict | None = None,
        relations: dict[str, dict[str, JSONValue]] | None = None,
        properties: JSONDict | None = None,
        constraints_history: list[BaseConstraint] | None = None,
    ) -> None:
        self.attributes: JSONDict = (
            {"objects": [], "target_areas": []} if attributes is None else attributes
        )
        self.memory: JSONDict = {} if memory is None else memory
        self.relations: dict[str, dict[str, JSONValue]] = _default_relations() if relations is None else relations
        self.properties: JSONDict = (
            _default_properties() if properties is None else properties
        )
        self.constraints_history: list[BaseConstraint] = (
            [] if constraints_history is None else constraints_history
        )
        for name, value in (("attributes", self.attributes), ("memory", self.memory),
                            ("relations", self.relations), ("properties", self.properties)):
            if not isinstance(value, dict):
                raise TypeError(f"TaskState.{name} must be a dict, got {type(value).__name__}")
        if not isinstance(self.constraints_history, list):
            raise TypeError("TaskState.constraints_history must be a list")

    def clone(self) -> TaskState:
        """A deep copy; the constraints list is copied but holds the same constraint objects."""
        return TaskState(
            copy.deepcopy(self.attributes),
            copy.deepcopy(self.memory),
            copy.deepcopy(self.relations),
            copy.deepcopy(self.properties),
            list(self.constraints_history),
        )

    def recompute_from_base(self, base: TaskState) -> TaskState:
        """``base`` cloned, with this state's attributes and memory, and the constraints this
        state recorded after ``base``'s replayed in order (outdated ones are dropped)."""
        fresh = base.clone()
        fresh.attributes = copy.deepcopy(self.attributes)
        fresh.memory = copy.deepcopy(self.memory)
        for constraint in self.constraints_history[len(base.constraints_history):]:
            if constraint.outdated(fresh):
                continue
            constraint.apply(fresh)
        return fresh

    def to_human_readable(self) -> str:
        """Sorted, indented sections; long lists are previewed ("+k more")."""
        lines: list[str] = []
        for section in ("attributes", "memory", "relations", "properties"):
            lines.append(f"{section}:")
            content = getattr(self, section)
            if not content:
                lines.append("  (empty)")
            for key in sorted(content, key=str):
                lines.append(f"  {key}: {_preview(content[key])}")
        names = [type(c).__name__ for c in self.constraints_history]
        lines.append(f"constraints: {_preview(names)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_human_readable()

    __repr__ = __str__


def _preview(value: object) -> str:
    if isinstance(value, dict):
        items = [f"{k}={v}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]
        return _preview(items) if items else "{}"
    if isinstance(value, (list, tuple)):
        shown = ", ".join(str(v) for v in value[:_PREVIEW])
        more = len(value) - _PREVIEW
        return f"[{shown}{f', +{more} more' if more > 0 else ''}]"
    return str(value)


class RuleRenderer:
    """Projects a ``TaskState`` into rule texts the agent must keep (default: none)."""

    def rules(self, state: TaskState) -> list[str]:
        return []
