"""``Listener``: the one callback shape every driver reports progress through.

``listener(event, subject, payload)``: ``event`` names what happened, ``subject`` what it
happened to (an episode, an episode note from a worker or an actor, a generation tree's
number; None for run-wide events such as ``"warning"`` and ``"begin"``), ``payload`` the
details. :func:`magma_core.runs.run`, the run loop, worker processes, Ray actors and
:func:`magma_core.gen.generate` all call listeners of this shape; each front door's doc
lists its events.
"""

from __future__ import annotations

from typing import Any, Protocol


class Listener(Protocol):
    """``(event, subject, payload) -> None``; see the module doc."""

    def __call__(self, event: str, subject: Any, payload: Any, /) -> None: ...


def no_listener(event: str, subject: Any, payload: Any, /) -> None:
    """The listener that ignores everything (the default of every driver)."""
    return None
