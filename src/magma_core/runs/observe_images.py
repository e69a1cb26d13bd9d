"""``--observe images`` in the run loop: each decision's input carries the world's camera
images (rendered after the previous decision), and the episode keeps them for the store.

The images go into the input's ``extra_keys["images"]`` (see
:mod:`magma_core.agents.image_parts`) and, once per decision, into the episode's
``decision_images`` rows (see :mod:`magma_core.store.images`), as the same PNG bytes.
"""

from __future__ import annotations

from typing import Any

from magma_core.agents.image_parts import IMAGES_KEY, decode_entry, image_entry
from magma_core.protocol.agent import AgentInput
from magma_core.store.images import ImageRow

__all__ = ["attach_images"]


def attach_images(executor: Any, slot: int, agent_input: AgentInput, decision: int,
                  rows: list[ImageRow]) -> AgentInput:
    """``agent_input`` with ``slot``'s camera images now in ``extra_keys["images"]``; their
    rows (``decision``: the decision they are shown for, from 1) appended to ``rows``."""
    images = executor.camera_images(slot)
    if not images:
        return agent_input
    entries = [image_entry(name, rgb) for name, rgb in sorted(images.items())]
    for entry in entries:
        rows.append((decision, entry["camera"], entry["media_type"], entry["width"],
                     entry["height"], decode_entry(entry)))
    extra = {**agent_input.extra_keys, IMAGES_KEY: entries}
    return agent_input.model_copy(update={"extra_keys": extra})
