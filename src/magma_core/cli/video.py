"""``magma runs video NAME --episode K`` and ``magma run --videos``: episode videos (mp4)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from rich.console import Console

    from magma_core.store.run_store import EpisodeSummary

VIDEO_CHOICES = ("all", "failures")
KIND_HELP = ("rendered: the world through its camera (needs a render device: make render); "
             "schematic: the top-down drawing; auto (default): rendered when this machine can")


def add_kind_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """``--kind`` and ``--motion-frames`` (``--video-kind`` / ``--motion-frames`` with a
    ``prefix``) for commands that write videos."""
    from magma_core.render.video import KINDS, MOVE

    parser.add_argument(f"--{prefix}kind", dest="video_kind", choices=KINDS, default="auto",
                        help=KIND_HELP)
    parser.add_argument("--motion-frames", type=int, default=MOVE, metavar="N",
                        help=f"pictures of the motion between two decisions ({MOVE}); the rest "
                        "of a decision's frames hold its state")


def require_render(feature: str) -> None:
    """A user error with the one-line reason when ``feature`` needs a render device and this
    machine has none."""
    from magma_core.render.device import render_unavailable

    reason = render_unavailable()
    if reason is not None:
        raise UserError(f"{feature} needs rendering: {reason}")


def say_note(console: Console, note: str) -> None:
    """Print ``note`` on ``console`` as one line, whatever the terminal's width."""
    console.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)


def resolve_video_kind(kind: str) -> tuple[str, str | None]:
    """(kind to make, one-line note or None): ``render.video.resolve_kind``, its
    ``rendered``-without-a-device error a user error."""
    from magma_core.render.video import VideoError, resolve_kind

    try:
        return resolve_kind(kind)
    except VideoError as exc:
        raise UserError(str(exc)) from None


def video_kind(kind: str, console: Console | None = None) -> str:
    """The kind of video to make: ``auto`` is ``rendered`` where a render device is, else
    ``schematic`` (saying why in one line on ``console``); ``rendered`` without a device is
    a user error with the one-line reason."""
    resolved, note = resolve_video_kind(kind)
    if note is not None and console is not None:
        say_note(console, note)
    return resolved


def add_video_parser(actions: argparse._SubParsersAction) -> None:
    """Register ``video`` under ``magma runs``."""
    video = actions.add_parser("video", help="an episode's video (mp4): rendered through the world's "
                               "camera, or its top-down replay")
    video.add_argument("name", help="run name")
    video.add_argument("--episode", type=int, required=True, help="episode index")
    video.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    video.add_argument(
        "--output", type=Path, default=None,
        help="mp4 file to write (default OUT/videos/NAME/episode-K.mp4)",
    )
    add_kind_options(video)
    video.set_defaults(func=_video)


def _video(args: argparse.Namespace) -> int:
    from magma_core.render.video import VideoError
    from magma_core.runs.videos import write_episode_video

    if not (args.out / "magma.db").exists():
        raise UserError(f"no run store at {args.out / 'magma.db'}")
    if args.output is not None and args.output.suffix.lower() != ".mp4":
        raise UserError(f"--output must name an .mp4 file, got {args.output}")
    if args.motion_frames < 0:
        raise UserError(f"--motion-frames must be 0 or more, got {args.motion_frames}")
    from rich.console import Console

    kind, note = resolve_video_kind(args.video_kind)
    try:
        path = write_episode_video(args.out, args.name, args.episode, args.output, kind=kind,
                                   motion_frames=args.motion_frames)
    except VideoError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the video: {exc.strerror or exc}") from None
    if note is not None:  # after the video: a failure says one line, its own
        say_note(Console(stderr=True), note)
    print(f"wrote {path}")
    return 0


def render_run_videos(folder: Path, run_name: str, summaries: Iterable[EpisodeSummary], which: str,
                      console: Console, kind: str = "schematic", motion_frames: int | None = None) -> None:
    """Videos of a run's episodes (``all``, or ``failures``: those that did not succeed),
    ``kind`` as :func:`video_kind` resolves it; the rendering worlds are shared."""
    from magma_core.render.rendered import RunCameras
    from magma_core.render.video import MOVE, VideoError
    from magma_core.runs.videos import write_episode_video

    chosen = [s.episode for s in summaries if which == "all" or s.status != "success"]
    if not chosen:
        return
    kind = video_kind(kind, console)
    cameras = None
    if kind == "rendered":
        cameras = RunCameras()
    try:
        for episode in chosen:
            try:
                path = write_episode_video(folder, run_name, episode, kind=kind, cameras=cameras,
                                           motion_frames=MOVE if motion_frames is None else motion_frames)
            except (VideoError, OSError) as exc:
                say_note(console, f"no video for episode {episode}: {exc}")
                continue
            console.print(f"video: {path}")
    finally:
        if cameras is not None:
            cameras.close()
