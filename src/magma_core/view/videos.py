"""The viewer's video route: an episode's mp4, asked of the render package over the store.

The viewer makes no picture itself: :func:`episode_video` resolves the kind the page asked
for (``render.video.resolve_kind``: ``auto`` falls back to the schematic without a render
device, and says why in a header), has :func:`magma_core.runs.videos.write_episode_video`
make the file in a temporary folder (the viewer writes nothing into the output folder), and
answers its bytes. A ``rendered`` video without a render device is a 409 with the one-line
reason; an episode without world states a 404.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fastapi import HTTPException
from fastapi.responses import Response

from magma_core.render.video import KINDS, VideoError, resolve_kind
from magma_core.runs.videos import write_episode_video
from magma_core.store.reader import StoreReader

__all__ = ["episode_video"]


def episode_video(reader: StoreReader, name: str, episode: int, kind: str) -> Response:
    """The mp4 of episode ``episode`` of run ``name`` (``kind``: schematic, auto, rendered)."""
    if kind not in KINDS:
        raise HTTPException(422, f"unknown video kind {kind!r}; choose one of {', '.join(KINDS)}")
    if reader.episode(name, episode) is None:
        raise HTTPException(404, f"run {name!r} has no episode {episode}")
    try:
        made, note = resolve_kind(kind)
    except VideoError as exc:
        raise HTTPException(409, str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="magma-view-video-") as tmp:
        output = Path(tmp) / f"{episode}.mp4"
        try:
            write_episode_video(reader.folder, name, episode, output, kind=made)
        except VideoError as exc:
            raise HTTPException(404 if "world states" in str(exc) else 409, str(exc)) from None
        data = output.read_bytes()
    headers = {"X-Magma-Video-Kind": made, "Cache-Control": "no-cache"}
    if note is not None:
        headers["X-Magma-Video-Note"] = note
    return Response(data, media_type="video/mp4", headers=headers)
