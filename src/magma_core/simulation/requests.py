"""``BaseRequest`` at the predecessor's import path (defined in ``simulation.tasks.requests``)."""

from magma_core.simulation.tasks.requests import BaseRequest

__all__ = ["BaseRequest"]
