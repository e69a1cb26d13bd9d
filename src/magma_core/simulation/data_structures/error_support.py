"""``ToolErrorSupport``: a tool's opt-in to the hooks of an injected error type.

It lives in layer 1 (as in the predecessor, authors import it from
``magma_core.simulation.data_structures``); ``magma_core.simulation.errors`` re-exports it.
The error type is recognised by its class hierarchy's qualified names, so this module never
imports the error layer above it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

BASE_ERROR = ("magma_core.simulation.errors.base", "BaseError")


def is_error_type(value: object) -> bool:
    """Whether ``value`` is a subclass of ``magma_core.simulation.errors.BaseError``."""
    return inspect.isclass(value) and any(
        (c.__module__, c.__qualname__) == BASE_ERROR for c in value.__mro__
    )


def check_no_argument_error_type(error_type: type) -> None:
    """``TypeError`` unless ``error_type`` is a ``BaseError`` subclass constructible without args."""
    if not is_error_type(error_type):
        raise TypeError(f"An error type must be a BaseError subclass, got {error_type!r}")
    if inspect.isabstract(error_type):
        raise TypeError(f"Error type {error_type.__name__} is abstract")
    try:
        inspect.signature(error_type).bind()
    except TypeError as exc:
        raise TypeError(
            f"Error type {error_type.__name__} must be constructible without arguments: {exc}"
        ) from None


@dataclass(frozen=True)
class ToolErrorSupport:
    """A tool's opt-in to the pre-execution and/or post-verification hooks of an error type."""

    error_type: type
    pre: bool = True
    post: bool = True

    def __post_init__(self) -> None:
        check_no_argument_error_type(self.error_type)
        if not isinstance(self.pre, bool) or not isinstance(self.post, bool):
            raise TypeError("ToolErrorSupport.pre and .post must be bools")
        if not (self.pre or self.post):
            raise TypeError(
                f"ToolErrorSupport({self.error_type.__name__}) must enable pre or post"
            )
