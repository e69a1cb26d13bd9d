"""Goals on how many objects lie in an area, and on one object resting on another.

The predecessor's names and arguments: ``AtLeastCountAt(objects, location, minimum)``,
``ExactCountAt(objects, location, expected)``, ``MaxAt(objects, location, maximum,
strict=True)`` and ``On(top_object, bottom_object)``. Containment is an XY distance
``<= thresh`` as for ``At``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from magma_core.simulation.goals.base import SCORE_DTYPE, BaseGoal
from magma_core.simulation.goals.positional import inside

__all__ = ["AtLeastCountAt", "ExactCountAt", "MaxAt", "On"]


def _names(objects: object, cls: str) -> list[str]:
    if isinstance(objects, str) or not isinstance(objects, Sequence):
        raise TypeError(f"{cls}.objects is a list of names")
    names = list(objects)
    if not names or not all(isinstance(o, str) and o for o in names):
        raise ValueError(f"{cls}.objects needs at least one non-empty name")
    return names


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be an int >= 0, got {value!r}")
    return value


def _thresh(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"thresh must be a positive number, got {value!r}")
    return float(value)


class _CountGoal(BaseGoal):
    def __init__(self, objects: Sequence[str], location: str, thresh: float) -> None:
        cls = type(self).__name__
        self.objects = _names(objects, cls)
        if not isinstance(location, str) or not location:
            raise TypeError(f"{cls}.location must be a non-empty str")
        self.location = location
        self.thresh = _thresh(thresh)

    def count(self, obs: dict[str, object]) -> torch.Tensor:
        """``Tensor[N]``: how many of ``objects`` lie in ``location``."""
        hits = torch.stack([inside(obs, o, self.location, self.thresh) for o in self.objects])
        return hits.sum(dim=0)


class AtLeastCountAt(_CountGoal):
    """1 where at least ``minimum`` of ``objects`` lie in ``location``, else 0."""

    def __init__(
        self, objects: Sequence[str], location: str, minimum: int, thresh: float = 0.1
    ) -> None:
        super().__init__(objects, location, thresh)
        self.minimum = _count(minimum, "AtLeastCountAt.minimum")

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        return (self.count(obs) >= self.minimum).to(SCORE_DTYPE)


class ExactCountAt(_CountGoal):
    """1 where exactly ``expected`` of ``objects`` lie in ``location``, else 0."""

    def __init__(
        self, objects: Sequence[str], location: str, expected: int, thresh: float = 0.1
    ) -> None:
        super().__init__(objects, location, thresh)
        self.expected = _count(expected, "ExactCountAt.expected")

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        return (self.count(obs) == self.expected).to(SCORE_DTYPE)


class MaxAt(_CountGoal):
    """1 unless more than ``maximum`` of ``objects`` lie in ``location``; then -1 when
    ``strict`` (failed for good), else 0."""

    def __init__(
        self, objects: Sequence[str], location: str, maximum: int, strict: bool = True,
        thresh: float = 0.1,
    ) -> None:
        super().__init__(objects, location, thresh)
        self.maximum = _count(maximum, "MaxAt.maximum")
        if not isinstance(strict, bool):
            raise TypeError("MaxAt.strict must be a bool")
        self.strict = strict

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        over = self.count(obs) > self.maximum
        bad = torch.full_like(over, -1 if self.strict else 0, dtype=SCORE_DTYPE)
        return torch.where(over, bad, torch.ones_like(bad))


class On(BaseGoal):
    """1 where ``top_object`` lies within ``thresh`` (XY) of ``bottom_object`` and higher
    than it, else 0. Reads full poses (``obs["extra"][name]``, z is the third value)."""

    def __init__(self, top_object: str, bottom_object: str, thresh: float = 0.05) -> None:
        for value, what in ((top_object, "top_object"), (bottom_object, "bottom_object")):
            if not isinstance(value, str) or not value:
                raise TypeError(f"On.{what} must be a non-empty str")
        self.top_object, self.bottom_object = top_object, bottom_object
        self.thresh = _thresh(thresh)

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        aligned = inside(obs, self.top_object, self.bottom_object, self.thresh)
        above = _z(obs, self.top_object) > _z(obs, self.bottom_object)
        return (aligned & above.to(aligned.device)).to(SCORE_DTYPE)


def _z(obs: dict[str, object], name: str) -> torch.Tensor:
    extra = obs["extra"]
    entry = extra[name] if isinstance(extra, dict) else None
    if isinstance(entry, dict):
        entry = entry.get("pose")
    if not isinstance(entry, torch.Tensor) or entry.ndim != 2 or entry.shape[1] < 3:
        raise ValueError(f"obs['extra'][{name!r}] must be an [N, 7] pose to read its height")
    return entry[:, 2]
