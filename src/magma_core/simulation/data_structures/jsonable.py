"""Conversion of engine data to strict JSON values (what records and exports hold)."""

from __future__ import annotations

import math
from enum import Enum

import torch

from magma_core.json_types import JSONValue


def jsonable(value: object) -> JSONValue:
    """``value`` as JSON-compatible data: tensors become lists, enums their values, objects
    with ``to_dict`` their dicts, non-finite floats the strings ``"nan"`` / ``"inf"`` /
    ``"-inf"``, anything else its ``repr``."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, torch.Tensor):
        return jsonable(value.detach().cpu().tolist())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    return repr(value)
