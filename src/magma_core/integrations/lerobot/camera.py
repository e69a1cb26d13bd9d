"""Camera frames of a LeRobot export: each control step's stored world seen through the
world's render camera (a ``StateCamera`` per world), as PNG bytes.

Imported only when an export renders (a render device is there), so that writing a dataset
without images never imports the simulator.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from PIL import Image

from magma_core.simulation.envs.state_camera import StateCamera

__all__ = ["FrameCameras"]


class FrameCameras:
    """The rendering worlds of one export, by (env id, options), built on first use."""

    def __init__(self, height: int, width: int) -> None:
        self.size = (int(height), int(width))
        self._cameras: dict[str, StateCamera] = {}

    def png(self, world: tuple[str, dict[str, Any], dict[str, Any]], state: Mapping[str, Any]) -> bytes:
        """The PNG of compact world ``state`` in ``world`` = (env id, env options, reset options)."""
        key = json.dumps(world, sort_keys=True, default=str)
        if key not in self._cameras:
            env_id, env_options, reset_options = world
            self._cameras[key] = StateCamera(env_id, env_options=env_options, reset_options=reset_options,
                                             width=self.size[1], height=self.size[0])
        buffer = io.BytesIO()
        Image.fromarray(self._cameras[key].frame(state)).save(buffer, format="PNG", compress_level=6)
        return buffer.getvalue()

    def close(self) -> None:
        for camera in self._cameras.values():
            camera.close()
        self._cameras = {}
