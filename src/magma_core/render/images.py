"""Camera images as agents, the store and exports carry them.

One image is one protocol entry (the format is ``magma_core.agents.image_parts``'):

    {"camera": "overview", "media_type": "image/png", "width": 256, "height": 256,
     "data": "<base64 of the PNG bytes>"}

:func:`observation_images` renders a slot's cameras now (``--observe images``: the run loop
calls it before each decision) and encodes them; :func:`image_entry` encodes one picture;
:func:`stored_entry` turns an image row the store kept back into the entry the agent got (the
exports call it), so the bytes an export carries are the bytes the agent saw.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any, Protocol

from magma_core.json_types import JSONDict, JSONValue

__all__ = ["CameraSource", "image_entry", "observation_images", "stored_entry"]

MEDIA_TYPE = "image/png"


class CameraSource(Protocol):
    """What renders a slot's cameras (the engine, ``Executor.camera_images``)."""

    def camera_images(self, slot: int) -> JSONDict: ...


def image_entry(camera: str, rgb: Any) -> JSONDict:
    """The protocol entry of one camera image (``rgb``: uint8 ``H x W x 3``), PNG-encoded."""
    from PIL import Image

    picture = Image.fromarray(rgb)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", compress_level=6)
    return {"camera": str(camera), "media_type": MEDIA_TYPE, "width": picture.width,
            "height": picture.height, "data": base64.b64encode(buffer.getvalue()).decode()}


def observation_images(source: CameraSource, slot: int) -> list[JSONDict]:
    """``slot``'s camera images rendered now, as entries in camera-name order (``[]`` when
    its world was built without cameras)."""
    images = source.camera_images(slot)
    return [image_entry(name, rgb) for name, rgb in sorted(images.items())]


def stored_entry(row: Mapping[str, JSONValue]) -> JSONDict:
    """The entry of an image row the store kept (``camera``, ``media_type``, ``width``,
    ``height``, ``data`` as bytes)."""
    return {"camera": row["camera"], "media_type": row["media_type"], "width": row["width"],
            "height": row["height"], "data": base64.b64encode(row["data"]).decode()}
