"""Injected errors: what a stage may inject and which tools opt into each error's hooks.

A stage declares error *instances* in ``StageErrorParameters.possible_errors``; a tool opts in
with ``@register_tool(errors=[ErrorClass | ToolErrorSupport(...)])``. An error affects a call
only when the stage selected it and the tool supports it.
"""

from magma_core.simulation.errors.base import BaseError, ToolErrorSupport

__all__ = ["BaseError", "ToolErrorSupport"]
