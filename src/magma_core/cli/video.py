"""``magma runs video NAME --episode K`` and ``magma run --videos``: episode videos (mp4)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.user_error import UserError

VIDEO_CHOICES = ("all", "failures")


def add_video_parser(actions: argparse._SubParsersAction) -> None:
    """Register ``video`` under ``magma runs``."""
    video = actions.add_parser("video", help="render an episode's top-down replay to an mp4")
    video.add_argument("name", help="run name")
    video.add_argument("--episode", type=int, required=True, help="episode index")
    video.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    video.add_argument(
        "--output", type=Path, default=None,
        help="mp4 file to write (default OUT/videos/NAME/episode-K.mp4)",
    )
    video.set_defaults(func=_video)


def _video(args: argparse.Namespace) -> int:
    from magma_core.view.video import VideoError, write_episode_video

    if not (args.out / "magma.db").exists():
        raise UserError(f"no run store at {args.out / 'magma.db'}")
    if args.output is not None and args.output.suffix.lower() != ".mp4":
        raise UserError(f"--output must name an .mp4 file, got {args.output}")
    try:
        path = write_episode_video(args.out, args.name, args.episode, args.output)
    except VideoError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the video: {exc.strerror or exc}") from None
    print(f"wrote {path}")
    return 0


def render_run_videos(folder: Path, run_name: str, summaries: Iterable[Any], which: str, console: Any) -> None:
    """Videos of a run's episodes (``all``, or ``failures``: those that did not succeed)."""
    from magma_core.view.video import VideoError, write_episode_video

    chosen = [s.episode for s in summaries if which == "all" or s.status != "success"]
    for episode in chosen:
        try:
            path = write_episode_video(folder, run_name, episode)
        except (VideoError, OSError) as exc:
            console.print(f"[yellow]no video for episode {episode}: {exc}[/yellow]")
            continue
        console.print(f"video: {path}")
