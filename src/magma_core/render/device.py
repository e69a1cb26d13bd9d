"""Render-device detection: can this process render, and if not, the one line saying why.

``MAGMA_RENDER=off`` (or ``0``, ``no``, ``false``) forces rendering off whatever the machine:
every rendering feature then behaves as on a machine without a render device (``--kind auto``
makes the schematic video, ``--kind rendered`` and ``--observe images`` are user errors, the
rendering tests skip), which is how the tests check that state on a machine that has one.
The switch is read on every call, so a test can flip it; the device itself is probed once
per process by the simulator layer (SAPIEN's device summary and a renderer start), and only
when the switch is not off: a forced-off answer imports neither ManiSkill nor SAPIEN.
"""

from __future__ import annotations

import os
import sys

__all__ = ["OFF_REASON", "RENDER_SWITCH", "forced_off", "render_unavailable", "reset_probe"]

#: The environment switch that forces rendering off.
RENDER_SWITCH = "MAGMA_RENDER"
OFF_VALUES = ("off", "0", "no", "false")
OFF_REASON = f"rendering is off ({RENDER_SWITCH}=off): unset it to render"


def forced_off() -> bool:
    """Whether ``MAGMA_RENDER`` turns rendering off in this process now."""
    return os.environ.get(RENDER_SWITCH, "").strip().lower() in OFF_VALUES


def render_unavailable() -> str | None:
    """None when this process can render; otherwise one line saying why not and what to do
    (``make render``, or unset ``MAGMA_RENDER``)."""
    if forced_off():
        return OFF_REASON
    from magma_core.simulation.envs.cameras import render_unavailable as probe

    return probe()


def reset_probe() -> None:
    """Forget the cached device probe (a test that changes the machine's state calls it)."""
    cameras = sys.modules.get("magma_core.simulation.envs.cameras")
    if cameras is not None:  # nothing was probed before the simulator layer was imported
        cameras.reset_probe()
