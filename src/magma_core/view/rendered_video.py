"""Rendered pictures for episode videos: the stored world states seen through the world's
camera (``kind="rendered"`` in :mod:`.video`).

The world of a stored run is rebuilt from its stored configuration (target, target
arguments, world options; a definition's per-episode task from the episode's seed), once per
world (:class:`RunCameras` keeps them for the videos of a command), and each state is
written into it and rendered by a
:class:`~magma_core.simulation.envs.state_camera.StateCamera`. Pictures between two
decisions are of interpolated states (poses and joint positions), not re-simulated physics.
"""

from __future__ import annotations

import json
from typing import Any

from PIL import Image, ImageDraw

from magma_core.store.reader import StoreReader
from magma_core.view.frames import FOOTER, HEIGHT, WIDTH, Caption, FrameDrawer
from magma_core.view.video import Picture, VideoError

__all__ = ["RunCameras", "rendered_picture", "world_of_run", "world_of_task"]


def world_of_run(config: dict[str, Any], seed: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(env id, world options, reset options) of the task a stored run's episode of
    ``seed`` ran; a :class:`VideoError` when the target cannot be loaded here."""
    from magma_core.runs.assembly import load_episode_tasks, load_task
    from magma_core.runs.spec import RunSpec

    target = config.get("preset")
    if not target:
        raise VideoError("the run's stored configuration names no target")
    try:
        spec = RunSpec(target=target, target_args=dict(config.get("target_args") or {}),
                       env_options=dict(config.get("env_options") or {}),
                       randomized=bool(config.get("randomized")), user=config.get("user"))
        tasks = load_episode_tasks(spec)
        task = tasks.task(seed) if tasks is not None else load_task(target, spec.target_args)
    except Exception as exc:  # a scenario that is gone, or arguments it no longer takes
        raise VideoError(f"cannot rebuild the world of {target} to render it: {exc}") from None
    params = task.initialization_parameters
    env_options = {**(params.env_options or {}), **(config.get("env_options") or {})}
    return task.maniskill_env_id, env_options, dict(params.reset_options or {})


class RunCameras:
    """Rendering worlds by (env id, options), built on first use; :meth:`close` them."""

    def __init__(self) -> None:
        self._cameras: dict[str, Any] = {}

    def camera(self, env_id: str, env_options: dict[str, Any], reset_options: dict[str, Any]) -> Any:
        from magma_core.simulation.envs.state_camera import StateCamera

        key = json.dumps([env_id, env_options, reset_options], sort_keys=True, default=str)
        if key not in self._cameras:
            try:
                self._cameras[key] = StateCamera(env_id, env_options=env_options,
                                                 reset_options=reset_options,
                                                 width=WIDTH, height=HEIGHT - FOOTER)
            except RuntimeError as exc:
                raise VideoError(str(exc)) from None
        return self._cameras[key]

    def close(self) -> None:
        for camera in self._cameras.values():
            camera.close()
        self._cameras = {}


def world_of_task(task: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(env id, world options, reset options) of a task object."""
    params = task.initialization_parameters
    return (task.maniskill_env_id, dict(params.env_options or {}),
            dict(params.reset_options or {}))


def rendered_picture(cameras: RunCameras, reader: StoreReader, run_name: str,
                     found: dict[str, Any], episode: int,
                     world: tuple[str, dict[str, Any], dict[str, Any]] | None = None) -> Picture:
    """The :data:`~magma_core.view.video.Picture` of a stored episode (``found``: what
    ``StoreReader.episode`` gives) rendered through its world's camera (``world``: its env id
    and options, default the stored run's target's); a :class:`VideoError` with the one-line
    reason when it cannot be."""
    from magma_core.simulation.envs.cameras import render_unavailable

    reason = render_unavailable()
    if reason is not None:
        raise VideoError(reason)
    run = reader.get_run(run_name) or {}
    seed = int((found.get("summary") or {}).get("seed", 0))
    camera = cameras.camera(*(world or world_of_run(run.get("config") or {}, seed)))
    footer = FrameDrawer({}, [])

    def picture(state: dict[str, Any] | None, caption: Caption) -> Image.Image:
        out = Image.new("RGB", (WIDTH, HEIGHT), (31, 38, 51))
        if state:
            out.paste(Image.fromarray(camera.frame(state)), (0, 0))
        footer.draw_footer(ImageDraw.Draw(out), caption)
        return out

    return picture
