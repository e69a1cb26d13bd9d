"""Request templates at the predecessor's path.

``GiveRelationAssignmentRequest``: the user assigns targets to up to
``max_simultaneous_change`` sources of a relation ("red cubes go to zone_b"), as a rule
(``BaseConstraintRequest``: a rule stage, then ``RelationAssignmentConstraint``s in the state).
``GiveObjectAssignmentRequest``: the same for objects -> areas (``relation="object_area"``).
Specialise ``sources``/``targets``/``text`` for a world; later requests read the rule with
``templates.constraints.resolve``.
"""

from __future__ import annotations

import random

from magma_core.simulation.tasks import TaskState
from magma_scenarios.templates.constraints import RelationAssignmentConstraint, resolve
from magma_scenarios.templates.requests.interact_request import (
    AttributesModificationParameters,
    BaseAttributesModifRequest,
    BaseConstraintRequest,
    ConstraintParameters,
)

__all__ = ["AttributesModificationParameters", "BaseAttributesModifRequest",
           "BaseConstraintRequest", "ConstraintParameters", "GiveObjectAssignmentRequest",
           "GiveRelationAssignmentRequest"]


class GiveRelationAssignmentRequest(BaseConstraintRequest):
    """Assign a target to 1..``max_simultaneous_change`` sources of ``relation``."""

    def __init__(self, relation: str, source_attribute_key: str, target_attribute_key: str,
                 max_simultaneous_change: int = 1, judged: bool = False,
                 reset_at_end: bool | None = None) -> None:
        super().__init__(judged=judged, reset_at_end=reset_at_end)
        if isinstance(max_simultaneous_change, bool) or not isinstance(max_simultaneous_change, int) \
                or max_simultaneous_change < 1:
            raise ValueError("max_simultaneous_change must be an int >= 1")
        self.relation = relation
        self.source_attribute_key, self.target_attribute_key = source_attribute_key, target_attribute_key
        self.max_simultaneous_change = max_simultaneous_change

    def sources(self, state: TaskState) -> list[str]:
        """The sources a rule may name (default: the attribute list; else a relation's values)."""
        values = state.attributes.get(self.source_attribute_key)
        if values is None:
            values = sorted(set(state.relations.get(self.source_attribute_key, {}).values()))
        return list(values)

    def targets(self, state: TaskState) -> list[str]:
        return list(state.attributes.get(self.target_attribute_key, []))

    def text(self, pairs: list[tuple[str, str]]) -> str:
        return "From now on: " + "; ".join(f"{s} goes to {t}" for s, t in pairs) + "."

    def _changes(self, state: TaskState) -> list[tuple[str, str]]:
        return [(s, t) for s in self.sources(state) for t in self.targets(state)
                if resolve(state, self.relation, s) != t]

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if self._changes(state) else 0.0

    def sample_constraints(self, state: TaskState, rng: random.Random) -> ConstraintParameters:
        options = self._changes(state)
        count = rng.randint(1, min(self.max_simultaneous_change, len({s for s, _ in options})))
        pairs: list[tuple[str, str]] = []
        for source, target in rng.sample(options, len(options)):
            if len(pairs) == count:
                break
            if source not in {s for s, _ in pairs}:
                pairs.append((source, target))
        constraints = tuple(RelationAssignmentConstraint(s, t, self.relation, self.source_attribute_key,
                                                         self.target_attribute_key) for s, t in pairs)
        return ConstraintParameters(constraints, self.text(pairs))


class GiveObjectAssignmentRequest(GiveRelationAssignmentRequest):
    """Objects -> areas (``relation="object_area"``, ``objects`` -> ``areas``)."""

    def __init__(self, max_simultaneous_change: int = 2, judged: bool = False,
                 reset_at_end: bool | None = None, relation: str = "object_area") -> None:
        super().__init__(relation, "objects", "areas", max_simultaneous_change, judged, reset_at_end)
