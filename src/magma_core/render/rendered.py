"""Rendered pictures for episode videos: stored world states seen through the world's camera
(``kind="rendered"`` in :mod:`.video`).

A world is built once per (env id, world options, reset options) (:class:`RunCameras` keeps
them for the videos of one command), and each state is written into it and rendered by a
:class:`~magma_core.simulation.envs.state_camera.StateCamera`. Pictures between two decisions
are of interpolated states (poses and joint positions), not re-simulated physics. Which world
an episode ran in is the caller's to say (``runs.videos.world_of_run`` for a stored run,
:func:`world_of_task` for a task object): this module reads no store.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw

from magma_core.json_types import JSONDict
from magma_core.render.device import render_unavailable
from magma_core.render.frames import FOOTER, HEIGHT, WIDTH, Caption, FrameDrawer
from magma_core.render.video import Picture, VideoError

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks import BaseTask

__all__ = ["RunCameras", "World", "rendered_picture", "world_of_task"]

#: (env id, world options, reset options): what a rendering world is built from.
World = tuple[str, JSONDict, JSONDict]


class RunCameras:
    """Rendering worlds by (env id, options), built on first use; :meth:`close` them."""

    def __init__(self) -> None:
        self._cameras: JSONDict = {}

    def camera(self, env_id: str, env_options: JSONDict, reset_options: JSONDict) -> Any:
        """The ``StateCamera`` of that world (built now if new); a :class:`VideoError` with
        the one-line reason when nothing can render."""
        reason = render_unavailable()
        if reason is not None:
            raise VideoError(reason)
        key = json.dumps([env_id, env_options, reset_options], sort_keys=True, default=str)
        if key not in self._cameras:
            from magma_core.simulation.envs.state_camera import StateCamera

            try:
                self._cameras[key] = StateCamera(env_id, env_options=env_options,
                                                 reset_options=reset_options,
                                                 width=WIDTH, height=HEIGHT - FOOTER)
            except RuntimeError as exc:
                raise VideoError(str(exc)) from None
        return self._cameras[key]

    def close(self) -> None:
        """Close every world built."""
        for camera in self._cameras.values():
            camera.close()
        self._cameras = {}


def world_of_task(task: BaseTask) -> World:
    """(env id, world options, reset options) of a task object."""
    params = task.initialization_parameters
    return (task.maniskill_env_id, dict(params.env_options or {}),
            dict(params.reset_options or {}))


def rendered_picture(cameras: RunCameras, world: World) -> Picture:
    """The :data:`~magma_core.render.video.Picture` of an episode of ``world`` rendered through
    its camera, above the schematic's footer; a :class:`VideoError` with the one-line reason
    when it cannot be."""
    camera = cameras.camera(*world)
    footer = FrameDrawer({}, [])

    def picture(state: JSONDict | None, caption: Caption) -> Image.Image:
        out = Image.new("RGB", (WIDTH, HEIGHT), (31, 38, 51))
        if state:
            out.paste(Image.fromarray(camera.frame(state)), (0, 0))
        footer.draw_footer(ImageDraw.Draw(out), caption)
        return out

    return picture
