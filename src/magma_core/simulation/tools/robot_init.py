"""Tools classes written for the predecessor: ``__init__(self, agents, equivalence)``.

The engine builds a tools class with no arguments, then binds the robots. For a subclass
whose own ``__init__`` requires arguments, ``defer_robot_init`` wraps it: called with no
arguments it only prepares the base; ``bind_robots`` then runs the author's ``__init__``
with ``agents`` (in robot index order) and ``equivalence`` (robot name -> index).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # named for the annotations only
    from mani_skill.agents.base_agent import BaseAgent

    from magma_core.simulation.tools.base import BaseToolsAPI


_PENDING = "_magma_pending_init"


def _requires_arguments(init: Callable[..., object]) -> bool:
    params = list(inspect.signature(init).parameters.values())[1:]  # without self
    return any(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in params
    )


def defer_robot_init(cls: type, base_init: Callable[[BaseToolsAPI], None]) -> None:
    """Wrap ``cls.__init__`` when it requires arguments (see the module docstring);
    ``base_init`` is the no-argument set-up of ``BaseToolsAPI``."""
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_magma_deferred", False) or not _requires_arguments(init):
        return

    @functools.wraps(init)
    def __init__(self: BaseToolsAPI, *args: object, **kwargs: object) -> None:
        if args or kwargs:
            init(self, *args, **kwargs)
            return
        base_init(self)
        setattr(self, _PENDING, init)

    __init__._magma_deferred = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]


def run_deferred_init(tools: BaseToolsAPI, robots: Mapping[str, BaseAgent]) -> None:
    """Run the author's ``__init__(agents, equivalence)`` left pending by the wrapper."""
    init = tools.__dict__.pop(_PENDING, None)
    if init is None:
        return
    bound = dict(robots)
    init(tools, list(bound.values()), {name: index for index, name in enumerate(bound)})
    tools._robots = bound  # the engine's names win over what the base derived
