"""The video of a stored episode: read from the store, made by the render package.

``magma runs video``, ``magma run --videos``, ``magma bench run --videos`` and the viewer's
video route all call :func:`write_episode_video`: it reads the episode's record and world
states from the store, works out which world a rendered video is rebuilt from
(:func:`world_of_run`: the run's stored target, its arguments and world options; a
definition's per-episode task from the episode's seed) and hands them to
:mod:`magma_core.render` (frames, camera, mp4 writer). The route goes downhill only: the
command (layer 8) -> this driver (7) -> the store (7) and the render package (6) -> the
simulator (4), and the simulator only for a rendered video.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from magma_core.render.device import render_unavailable
from magma_core.render.rendered import RunCameras, World, rendered_picture
from magma_core.render.video import KINDS, MOVE, VideoError, write_video
from magma_core.runs.assembly import load_episode_tasks, load_task
from magma_core.runs.spec import RunSpec
from magma_core.store.reader import StoreReader

__all__ = ["default_video_path", "world_of_run", "write_episode_video"]


def default_video_path(folder: Path, run_name: str, episode: int) -> Path:
    """Where ``magma runs video`` and ``magma run --videos`` put an episode's video."""
    return Path(folder) / "videos" / run_name / f"episode-{episode}.mp4"


def world_of_run(config: dict[str, Any], seed: int) -> World:
    """(env id, world options, reset options) of the task a stored run's episode of
    ``seed`` ran; a :class:`VideoError` when the target cannot be loaded here."""
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


def write_episode_video(folder: Path, run_name: str, episode: int, output: Path | None = None,
                        *, kind: str = "schematic", motion_frames: int = MOVE,
                        cameras: RunCameras | None = None, world: World | None = None) -> Path:
    """Make the video of a stored episode of the store in ``folder``; returns its path.

    ``kind``: ``schematic``, ``rendered`` (a :class:`VideoError` with the one-line reason
    when nothing can render) or ``auto`` (rendered when a render device is there; see
    ``render.video.resolve_kind`` for the note a caller prints).
    ``cameras``: a :class:`~magma_core.render.rendered.RunCameras` to share the rendering
    worlds between videos; ``world``: the episode's world when the run's stored target does
    not say (a benchmark trial's item).
    """
    if kind not in KINDS:
        raise VideoError(f"unknown video kind {kind!r}; choose one of {', '.join(KINDS)}")
    if motion_frames < 0:
        raise VideoError(f"motion frames must be 0 or more, got {motion_frames}")
    reader = StoreReader(folder)
    found = reader.episode(run_name, episode)
    if found is None:
        raise VideoError(f"run {run_name!r} has no episode {episode} in {folder}")
    output = output or default_video_path(folder, run_name, episode)
    shared = None if kind == "schematic" else (cameras if cameras is not None else RunCameras())
    try:
        picture = None
        if shared is not None:
            try:
                reason = render_unavailable()  # before loading the task: it may be costly
                if reason is not None:
                    raise VideoError(reason)
                if world is None:
                    run = reader.get_run(run_name) or {}
                    seed = int((found.get("summary") or {}).get("seed", 0))
                    world = world_of_run(run.get("config") or {}, seed)
                picture = rendered_picture(shared, world)
            except VideoError:
                if kind == "rendered":
                    raise  # auto: the schematic instead
        write_video(found["record"], reader.world(run_name, episode), episode, output,
                    picture=picture, motion_frames=motion_frames)
    finally:
        if shared is not None and cameras is None:
            shared.close()
    return output
