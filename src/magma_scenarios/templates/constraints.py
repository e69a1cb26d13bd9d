"""Relation constraints at the predecessor's path: a rule that assigns a target to a source
in one of the ``TaskState``'s relations (``RelationAssignmentConstraint``, "red cubes go to
zone_b"), and one that sets the relation's fallback target (``RelationDefaultConstraint``,
"everything else goes to zone_a"), clearing the exceptions. Both are recorded in the state's
``constraints_history`` and replayed by ``recompute_from_base`` unless ``outdated``."""

from __future__ import annotations

from magma_core.simulation.tasks import BaseConstraint, TaskState

__all__ = ["RelationAssignment", "RelationAssignmentConstraint", "RelationDefault",
           "RelationDefaultConstraint", "default_key", "resolve"]


def default_key(relation: str) -> str:
    """Where a relation's fallback target lives: ``state.properties[default_key(relation)]``."""
    return f"{relation}_default"


def resolve(state: TaskState, relation: str, source: str) -> str | None:
    """The target ``source`` has in ``relation``: its assignment, else the default, else None."""
    assigned = state.relations.get(relation, {}).get(source)
    return assigned if assigned is not None else state.properties.get(default_key(relation))


def _known(state: TaskState, key: str | None, value: str) -> bool:
    if key is None:
        return True
    values = state.attributes.get(key)
    if values is None:  # a relation's keys (e.g. the types of object_type) instead
        values = set(state.relations.get(key, {}).values())
    return value in values


class RelationAssignmentConstraint(BaseConstraint):
    """``state.relations[relation][source] = target``. With ``source_attribute_key`` /
    ``target_attribute_key`` (an attribute list or a relation whose values are the
    vocabulary), unknown names raise ``ValueError`` and a vanished one makes it outdated."""

    def __init__(self, source: str, target: str, relation: str,
                 source_attribute_key: str | None = None,
                 target_attribute_key: str | None = None) -> None:
        for name, value in (("source", source), ("target", target), ("relation", relation)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"RelationAssignmentConstraint.{name} must be a non-empty str")
        self.source, self.target, self.relation = source, target, relation
        self.source_attribute_key, self.target_attribute_key = source_attribute_key, target_attribute_key

    def apply(self, state: TaskState) -> TaskState:
        if not _known(state, self.source_attribute_key, self.source):
            raise ValueError(f"{self.source!r} is not one of {self.source_attribute_key}")
        if not _known(state, self.target_attribute_key, self.target):
            raise ValueError(f"{self.target!r} is not one of {self.target_attribute_key}")
        super().apply(state)
        state.relations.setdefault(self.relation, {})[self.source] = self.target
        return state

    def outdated(self, state: TaskState) -> bool:
        return not (_known(state, self.source_attribute_key, self.source)
                    and _known(state, self.target_attribute_key, self.target))


class RelationDefaultConstraint(BaseConstraint):
    """``target`` becomes the fallback of ``relation`` and earlier assignments are cleared
    (the new default is the whole rule)."""

    def __init__(self, relation: str, target: str, target_attribute_key: str | None = None) -> None:
        self.relation, self.target, self.target_attribute_key = relation, target, target_attribute_key

    def apply(self, state: TaskState) -> TaskState:
        if not _known(state, self.target_attribute_key, self.target):
            raise ValueError(f"{self.target!r} is not one of {self.target_attribute_key}")
        super().apply(state)
        state.relations[self.relation] = {}
        state.properties[default_key(self.relation)] = self.target
        return state

    def outdated(self, state: TaskState) -> bool:
        return not _known(state, self.target_attribute_key, self.target)


#: The names the issue and the predecessor's templates page use for them.
RelationAssignment = RelationAssignmentConstraint
RelationDefault = RelationDefaultConstraint
