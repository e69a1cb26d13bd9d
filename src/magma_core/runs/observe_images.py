"""``--observe images`` in the run loop: each decision's input carries the world's camera
images (rendered after the previous decision), and the episode keeps them for the store.

The images are made by the render package (:func:`magma_core.render.images.observation_images`)
and go into the input's ``extra_keys["images"]`` (see :mod:`magma_core.agents.image_parts`)
and, once per decision, into the episode's ``decision_images`` rows (see
:mod:`magma_core.store.images`), as the same PNG bytes.
"""

from __future__ import annotations

from magma_core.agents.image_parts import IMAGES_KEY, decode_entry
from magma_core.protocol.agent import AgentInput
from magma_core.render.images import CameraSource, observation_images
from magma_core.store.images import ImageRow

__all__ = ["attach_images"]


def attach_images(executor: CameraSource, slot: int, agent_input: AgentInput, decision: int,
                  rows: list[ImageRow]) -> AgentInput:
    """``agent_input`` with ``slot``'s camera images now in ``extra_keys["images"]``; their
    rows (``decision``: the decision they are shown for, from 1) appended to ``rows``."""
    entries = observation_images(executor, slot)
    if not entries:
        return agent_input
    for entry in entries:
        rows.append((decision, entry["camera"], entry["media_type"], entry["width"],
                     entry["height"], decode_entry(entry)))
    extra = {**agent_input.extra_keys, IMAGES_KEY: entries}
    return agent_input.model_copy(update={"extra_keys": extra})
