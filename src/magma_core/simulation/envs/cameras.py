"""Cameras: whether this machine can render, the built-in worlds' cameras, and their images.

Rendering is optional and costs time (a first frame takes seconds per process, then about
0.1-0.4 s per frame on the CPU), so nothing renders unless a feature asks for it:

* :func:`render_unavailable` says, once per process, why nothing can render (None when a
  render device is there). ``MAGMA_RENDER=off`` turns rendering off whatever the machine.
  Every rendering feature prints this line instead of an image, and its tests skip with it.
* :func:`render_backend` is the ``render_backend`` a rendering world is made with; worlds
  made for anything else keep ``"none"`` (see ``headless.backend_kwargs(render=False)``).
* :func:`default_cameras` are the cameras every ``DefaultEnv`` world declares the ManiSkill
  way (``_default_sensor_configs``): a fixed ``overview`` of the table and, on a single Panda,
  a ``wrist`` camera on its hand. No assets are downloaded.
* :func:`camera_images` renders them for one env row (uint8 ``H x W x 3`` arrays).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import sapien
import sapien.render
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.sensors.camera import CameraConfig
from mani_skill.utils import sapien_utils

__all__ = [
    "OVERVIEW",
    "WRIST",
    "camera_images",
    "default_cameras",
    "render_backend",
    "render_unavailable",
    "reset_probe",
]

OVERVIEW = "overview"
WRIST = "wrist"
INSTALL_HINT = "run `make render` as root (Debian 12; see docs/guides/rendering.md)"


def reset_probe() -> None:
    """Forget the cached probe (tests that change ``MAGMA_RENDER`` call this)."""
    _probe.cache_clear()


def render_unavailable() -> str | None:
    """None when this process can render; otherwise one line saying why not and what to do.

    The device is probed once per process (cached); ``MAGMA_RENDER=off`` (or ``0``, ``no``)
    forces rendering off.
    """
    if os.environ.get("MAGMA_RENDER", "").strip().lower() in ("off", "0", "no", "false"):
        return "rendering is off (MAGMA_RENDER=off): unset it to render"
    return _probe()


@lru_cache(maxsize=1)
def _probe() -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Failed to find system libvulkan..."
        try:
            summary = sapien.render.get_device_summary()
        except RuntimeError as exc:
            return (f"no render device (SAPIEN: {' '.join(str(exc).split())}): SAPIEN needs a "
                    f"Vulkan driver it accepts; {INSTALL_HINT}")
        if "Supported: 1" not in summary:
            return f"no render device SAPIEN supports ({' '.join(summary.split())}); {INSTALL_HINT}"
        try:  # what ManiSkill does with render_backend="cpu" (about 0.05 s)
            sapien.render.RenderSystem(sapien.Device("cpu"))
        except RuntimeError as exc:
            return f"cannot start SAPIEN's renderer ({' '.join(str(exc).split())}); {INSTALL_HINT}"
    return None


def render_backend(gpu: bool = False) -> str:
    """ManiSkill's ``render_backend`` for a world that renders: the GPU with CUDA, else the
    software Vulkan device (``"cpu"``: SAPIEN's device of a CPU Vulkan driver)."""
    return "gpu" if gpu else "cpu"


def _look_at(eye: Sequence[float], target: Sequence[float]) -> sapien.Pose:
    return sapien_utils.look_at(eye=list(eye), target=list(target))


def default_cameras(
    env: BaseEnv,
    *,
    eye: Sequence[float] = (0.55, 0.55, 0.6),
    target: Sequence[float] = (-0.05, 0.0, 0.05),
    size: int = 256,
    wrist_size: int = 128,
) -> list[CameraConfig]:
    """The cameras of a ``DefaultEnv`` world: ``overview`` (fixed, looking from ``eye`` at
    ``target``, ``size`` square) and, when the world has one robot with a ``panda_hand``
    link, ``wrist`` (mounted on the hand, looking along the fingers)."""
    cameras = [CameraConfig(OVERVIEW, _look_at(eye, target), size, size, 1.0, 0.01, 100)]
    agent = getattr(env, "agent", None)
    robot = getattr(agent, "robot", None)
    links = getattr(robot, "links_map", None) or {}
    if "panda_hand" in links:
        # SAPIEN cameras look along +x: turn x onto the hand's z (out of the fingers)
        half = -math.pi / 4
        pose = sapien.Pose(p=[0.05, 0.0, 0.02], q=[math.cos(half), 0.0, math.sin(half), 0.0])
        cameras.append(CameraConfig(WRIST, pose, wrist_size, wrist_size, math.pi / 2, 0.01, 10,
                                    mount=links["panda_hand"]))
    return cameras


def camera_images(env: BaseEnv, row: int = 0, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Camera name → RGB image (uint8 ``H x W x 3``) of env row ``row``, rendered now.

    ``names`` picks cameras (default: every sensor camera of the world). The env must have
    been made with a render backend (see :func:`render_backend`).
    """
    sensors = getattr(env, "_sensors", None) or {}
    chosen = list(sensors) if names is None else [n for n in names if n in sensors]
    if not chosen:
        return {}
    env.scene.update_render(update_sensors=True, update_human_render_cameras=False)
    out: dict[str, np.ndarray] = {}
    for name in chosen:
        sensor = sensors[name]
        sensor.capture()
        rgb = sensor.get_obs(rgb=True, depth=False, position=False, segmentation=False)["rgb"]
        image = rgb[row] if rgb.dim() == 4 else rgb
        out[name] = image[..., :3].detach().cpu().numpy().astype(np.uint8)
    return out
