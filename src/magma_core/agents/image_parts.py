"""Camera images in agent inputs: the protocol field and the OpenAI-compatible content parts.

With ``--observe images`` (``RunSpec.observe``) each decision's input carries the world's
camera images, rendered after the previous decision, in ``extra_keys["images"]`` (protocol
2.0 lets an input carry extra keys): a list of

    {"camera": "overview", "media_type": "image/png", "width": 256, "height": 256,
     "data": "<base64 of the PNG bytes>"}

one per camera (``overview``, and ``wrist`` on a single Panda). An agent that does not look
at images ignores the key. :func:`with_image_parts` gives the OpenAI-compatible agent's turn
the ``image_url`` content parts (``data:`` URLs) that vLLM, llama.cpp's server and OpenAI
accept; the images are sent with the turn they belong to and never kept in the
conversation history (each later turn brings its own). The entries are made by
``magma_core.render.images`` (the camera pictures, PNG-encoded).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

from magma_core.json_types import JSONDict, JSONValue

__all__ = ["IMAGES_KEY", "decode_entry", "image_parts", "with_image_parts"]

IMAGES_KEY = "images"
IMAGE_TEXT = "[camera] what the {cameras} camera{s} see{verb} now:"


def decode_entry(entry: Mapping[str, JSONValue]) -> bytes:
    """The image bytes of a protocol entry."""
    return base64.b64decode(str(entry.get("data", "")))


def _entries(extra_keys: Mapping[str, JSONValue] | None) -> list[Mapping[str, JSONValue]]:
    images = (extra_keys or {}).get(IMAGES_KEY)
    if not isinstance(images, list):
        return []
    return [e for e in images if isinstance(e, Mapping) and isinstance(e.get("data"), str)
            and str(e.get("media_type", "")).startswith("image/")]


def image_parts(extra_keys: Mapping[str, JSONValue] | None) -> list[JSONDict]:
    """``image_url`` content parts (``data:`` URLs) of an input's images; ``[]`` without."""
    return [{"type": "image_url",
             "image_url": {"url": f"data:{e['media_type']};base64,{e['data']}"}}
            for e in _entries(extra_keys)]


def with_image_parts(turn: Sequence[JSONDict],
                     extra_keys: Mapping[str, JSONValue] | None) -> list[JSONDict]:
    """``turn`` (the messages of this decision) with the input's images added as content
    parts: to its last user message, or in a user message of their own after a tool result.
    Unchanged (a copy) when the input has no images."""
    parts = image_parts(extra_keys)
    out = [dict(message) for message in turn]
    if not parts:
        return out
    cameras = [str(e.get("camera", "?")) for e in _entries(extra_keys)]
    caption = IMAGE_TEXT.format(cameras=" and ".join(cameras), s="s" if len(cameras) > 1 else "",
                                verb="" if len(cameras) > 1 else "s")
    if out and out[-1].get("role") == "user":
        content = out[-1].get("content")
        text = content if isinstance(content, str) else ""
        out[-1]["content"] = [{"type": "text", "text": text}, {"type": "text", "text": caption}, *parts]
    else:
        out.append({"role": "user", "content": [{"type": "text", "text": caption}, *parts]})
    return out
