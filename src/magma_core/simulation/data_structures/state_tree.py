"""The type of a batched env state: a nested dict of tensors with a leading slot dimension.

ManiSkill's ``get_state_dict()`` layout, ``{"actors": {name: [N, 13]}, "articulations":
{name: [N, D]}, "magma_extra_state": {key: [N, ...]}}``; the operations on it live in
``simulation.state``. A raw observation is a tree of the same kind whose leaves a scenario
chooses, so readers of one take ``Mapping[str, object]`` and check what they find.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import torch

__all__ = ["StateNode", "StateTree"]

StateNode: TypeAlias = torch.Tensor | Mapping[str, "StateNode"]
StateTree: TypeAlias = dict[str, StateNode]
