"""Constraints at the predecessor's import path (defined in ``simulation.tasks.constraints``)."""

from magma_core.simulation.tasks.constraints import (
    AttributesModifConstraint,
    BaseConstraint,
    ForbidConstraint,
)

__all__ = ["AttributesModifConstraint", "BaseConstraint", "ForbidConstraint"]
