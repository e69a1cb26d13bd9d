"""Headless support: run ManiSkill scene builders on a machine with no render device.

ManiSkill 3.0.1 can simulate with ``render_backend="none"``, but its actor builders still
construct ``sapien.render.RenderMaterial`` objects, which need a Vulkan device. On a machine
without one, :func:`ensure_headless` swaps that class for a small stand-in that records its
arguments and ignores setters. It is applied only when no render device exists, never on a
machine that can render; :func:`backend_kwargs` gives the matching ``gym.make`` arguments
(``render_backend="none"`` unless a world is made to render).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import lru_cache

import sapien.pysapien
import sapien.render

from magma_core.simulation.envs.cameras import render_backend, render_unavailable

__all__ = ["backend_kwargs", "ensure_headless", "has_render_device", "is_patched"]

_PATCHED = False


class _HeadlessRenderMaterial:
    """Stand-in for ``sapien.render.RenderMaterial`` when nothing can render."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.args = args
        self.kwargs = kwargs
        self.base_color = kwargs.get("base_color", [1.0, 1.0, 1.0, 1.0])

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("set_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


@lru_cache(maxsize=1)
def has_render_device() -> bool:
    """True when SAPIEN finds a device it can render with (probed once per process)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Failed to find system libvulkan..."
        try:
            sapien.render.get_device_summary()
        except RuntimeError:
            return False
    return True


def ensure_headless() -> bool:
    """Install the ``RenderMaterial`` stand-in if (and only if) no render device exists.

    Idempotent. Returns True when the stand-in is active.
    """
    global _PATCHED
    if _PATCHED or has_render_device():
        return _PATCHED
    sapien.render.RenderMaterial = _HeadlessRenderMaterial  # used by mani_skill builders
    sapien.pysapien.render.RenderMaterial = _HeadlessRenderMaterial  # used by sapien.wrapper
    _PATCHED = True
    return True


def is_patched() -> bool:
    """Whether the stand-in has been installed in this process."""
    return _PATCHED


def backend_kwargs(gpu: bool = False, render: bool = False) -> dict[str, str]:
    """``gym.make`` backend arguments for this machine.

    ``gpu=True`` asks for ``physx_cuda``. The render backend is ``"none"`` unless ``render``
    is asked for and a render device is there (see
    :func:`~magma_core.simulation.envs.cameras.render_unavailable`): a world that renders
    nothing pays nothing for cameras, even on a machine that could render. Without a render
    device the ``RenderMaterial`` stand-in is installed.
    """
    ensure_headless()
    kwargs = {"sim_backend": "physx_cuda" if gpu else "physx_cpu", "render_backend": "none"}
    if render and render_unavailable() is None:
        kwargs["render_backend"] = render_backend(gpu)
    return kwargs
