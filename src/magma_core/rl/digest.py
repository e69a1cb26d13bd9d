"""A digest of one slot's world state, to show that a group's rollouts start identically."""

from __future__ import annotations

import hashlib
from typing import Any

import torch


def world_digest(state: Any) -> str:
    """SHA-256 (hex, 16 characters shown by callers as they like) over a nested dict of tensors
    in ``get_state_dict()`` layout: every path, dtype, shape and the raw bytes, in sorted order.
    Equal digests mean bit-identical world states."""
    h = hashlib.sha256()
    _feed(h, "", state)
    return h.hexdigest()


def _feed(h: Any, path: str, value: Any) -> None:
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            _feed(h, f"{path}/{key}", value[key])
    elif isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        h.update(f"{path}:{tensor.dtype}:{tuple(tensor.shape)}:".encode())
        h.update(tensor.numpy().tobytes() if tensor.dtype != torch.bfloat16 else tensor.float().numpy().tobytes())
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _feed(h, f"{path}[{i}]", item)
    else:
        h.update(f"{path}={value!r};".encode())
