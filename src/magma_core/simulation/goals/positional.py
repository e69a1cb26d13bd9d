"""Goals on object positions: ``At``, ``NotAt`` and ``CountAt`` (XY distance <= ``thresh``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import torch

from magma_core.simulation.goals.base import SCORE_DTYPE, BaseGoal, object_xy

T = TypeVar("T")


def _check_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty str, got {value!r}")
    return value


def _check_thresh(thresh: object) -> float:
    if isinstance(thresh, bool) or not isinstance(thresh, (int, float)) or not thresh > 0:
        raise ValueError(f"thresh must be a positive number, got {thresh!r}")
    return float(thresh)


def keyword_alias(cls: str, ours: tuple[str, T | None], theirs: tuple[str, T | None]) -> T:
    """One argument given under our name or the predecessor's (``obj_name``, ``location``)."""
    (name, value), (old_name, old_value) = ours, theirs
    if value is not None and old_value is not None and value != old_value:
        raise TypeError(f"{cls} got both {name}={value!r} and {old_name}={old_value!r}")
    if value is not None:
        return value
    if old_value is not None:
        return old_value
    raise TypeError(f"{cls} missing required argument {name!r} (or {old_name!r})")


def inside(obs: dict[str, object], obj: str, area: str, thresh: float) -> torch.Tensor:
    """``Tensor[N]`` of bools: is ``obj`` within ``thresh`` (XY) of ``area``?"""
    obj_xy, area_xy = object_xy(obs, obj), object_xy(obs, area)
    if obj_xy.shape[0] != area_xy.shape[0]:
        raise ValueError(f"{obj!r} and {area!r} have different numbers of envs")
    return torch.linalg.vector_norm(obj_xy - area_xy.to(obj_xy.device), dim=1) <= thresh


class At(BaseGoal):
    """1 where ``obj`` lies within ``thresh`` of ``area`` (XY), else 0.

    The predecessor's keyword names ``obj_name`` and ``location`` are accepted too.
    """

    def __init__(
        self, obj: str | None = None, area: str | None = None, thresh: float = 0.1, *,
        obj_name: str | None = None, location: str | None = None,
    ) -> None:
        obj = keyword_alias("At", ("obj", obj), ("obj_name", obj_name))
        area = keyword_alias("At", ("area", area), ("location", location))
        self.obj = _check_name(obj, "At.obj")
        self.area = _check_name(area, "At.area")
        self.thresh = _check_thresh(thresh)

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"obj": self.obj, "area": self.area, "thresh": self.thresh}

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        return inside(obs, self.obj, self.area, self.thresh).to(SCORE_DTYPE)


class NotAt(BaseGoal):
    """1 unless ``obj`` lies in one of ``area`` (a name or a list of names); then -1 when
    ``strict`` (a definitive failure), else 0. ``obj_name`` and ``locations`` (the
    predecessor's keyword names) are accepted too."""

    def __init__(
        self, obj: str | None = None, area: str | Sequence[str] | None = None,
        strict: bool = True, thresh: float = 0.1, *,
        obj_name: str | None = None, locations: str | Sequence[str] | None = None,
    ) -> None:
        obj = keyword_alias("NotAt", ("obj", obj), ("obj_name", obj_name))
        area = keyword_alias("NotAt", ("area", area), ("locations", locations))
        self.obj = _check_name(obj, "NotAt.obj")
        areas = [area] if isinstance(area, str) else list(area)
        if not areas:
            raise ValueError("NotAt needs at least one area")
        for name in areas:
            _check_name(name, "NotAt.area")
        self.area = area if isinstance(area, str) else areas
        if not isinstance(strict, bool):
            raise TypeError("NotAt.strict must be a bool")
        self.strict = strict
        self.thresh = _check_thresh(thresh)

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"obj": self.obj, "area": self.area, "strict": self.strict, "thresh": self.thresh}

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        areas = [self.area] if isinstance(self.area, str) else self.area
        hit = torch.stack([inside(obs, self.obj, a, self.thresh) for a in areas]).any(dim=0)
        bad = torch.full_like(hit, -1 if self.strict else 0, dtype=SCORE_DTYPE)
        return torch.where(hit, bad, torch.ones_like(bad))


class CountAt(BaseGoal):
    """1 where at least ``count`` of ``objs`` lie within ``thresh`` of ``area`` (XY), else 0."""

    def __init__(self, objs: Sequence[str], area: str, count: int, thresh: float = 0.1) -> None:
        if isinstance(objs, str):
            raise TypeError("CountAt.objs is a list of names, not one str")
        self.objs = [_check_name(o, "CountAt.objs entry") for o in objs]
        if not self.objs:
            raise ValueError("CountAt needs at least one object")
        self.area = _check_name(area, "CountAt.area")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"CountAt.count must be an int >= 0, got {count!r}")
        self.count = count
        self.thresh = _check_thresh(thresh)

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        hits = torch.stack([inside(obs, o, self.area, self.thresh) for o in self.objs])
        return (hits.sum(dim=0) >= self.count).to(SCORE_DTYPE)
