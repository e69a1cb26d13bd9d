"""Generation-time constraints: recorded edits of a ``TaskState`` that later requests respect."""

from __future__ import annotations

import copy

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.task_state import TaskState


class BaseConstraint:
    """A constraint: ``apply`` records it in the state's history (subclasses also edit the
    state); ``outdated`` says whether replaying it on a recomputed state is pointless."""

    def apply(self, state: TaskState) -> TaskState:
        state.constraints_history.append(self)
        return state

    def outdated(self, state: TaskState) -> bool:
        return False


class AttributesModifConstraint(BaseConstraint):
    """Replaces the state's attributes with ``attributes`` (a copy)."""

    def __init__(self, attributes: JSONDict) -> None:
        if not isinstance(attributes, dict):
            raise TypeError("AttributesModifConstraint.attributes must be a dict")
        self.attributes = copy.deepcopy(attributes)

    def apply(self, state: TaskState) -> TaskState:
        super().apply(state)
        state.attributes = copy.deepcopy(self.attributes)
        return state


class ForbidConstraint(BaseConstraint):
    """Adds ``name`` to ``properties["forbidden_objects"]`` or ``["forbidden_areas"]``."""

    def __init__(self, kind: str, name: str) -> None:
        if kind not in ("objects", "areas"):
            raise ValueError(f"ForbidConstraint.kind is 'objects' or 'areas', got {kind!r}")
        self.kind = kind
        self.name = name

    def apply(self, state: TaskState) -> TaskState:
        super().apply(state)
        forbidden = state.properties.setdefault(f"forbidden_{self.kind}", [])
        if self.name not in forbidden:
            forbidden.append(self.name)
        return state
