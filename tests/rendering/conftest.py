"""Rendering tests: they need a render device (``make render``) and skip with the one-line
reason of :func:`magma_core.render.render_unavailable` without one.

A process's first frame costs 5-30 s on the CPU, so the tests are few and a module shares
one rendering simulator.
"""

from __future__ import annotations

import pytest


def require_render() -> None:
    """Skip the calling test with the one-line reason when nothing can render here."""
    from magma_core.render import render_unavailable

    reason = render_unavailable()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture
def render_ready() -> None:
    require_render()
