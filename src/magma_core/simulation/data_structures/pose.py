"""Our own rigid pose: position xyz + quaternion wxyz (no simulator import)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from magma_core.json_types import JSONDict
from magma_core.serialization import register_value_type


@runtime_checkable
class SupportsToList(Protocol):
    """A numpy array or a torch tensor: anything with ``tolist()``."""

    def tolist(self) -> list[float]: ...


@runtime_checkable
class SapienLikePose(Protocol):
    """A ``sapien.Pose`` or anything with position ``p`` and quaternion ``q``."""

    p: Sequence[float]
    q: Sequence[float]


@dataclass(frozen=True)
class Pose:
    """A pose as used in tool trajectories. ``q`` is a unit quaternion in wxyz order."""

    p: tuple[float, float, float] = (0.0, 0.0, 0.0)
    q: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        p = tuple(float(v) for v in self.p)
        q = tuple(float(v) for v in self.q)
        if len(p) != 3:
            raise ValueError(f"Pose position needs 3 values, got {len(p)}")
        if len(q) != 4:
            raise ValueError(f"Pose quaternion needs 4 values (wxyz), got {len(q)}")
        if not all(math.isfinite(v) for v in p + q):
            raise ValueError("Pose values must be finite")
        norm = math.sqrt(sum(v * v for v in q))
        if norm < 1e-9:
            raise ValueError("Pose quaternion must not be zero")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", tuple(v / norm for v in q))

    @classmethod
    def from_vector(cls, vec: Sequence[float] | SupportsToList) -> Pose:
        """Build from a 7-vector ``[x, y, z, qw, qx, qy, qz]`` (list, numpy or torch)."""
        values = [float(v) for v in (vec.tolist() if isinstance(vec, SupportsToList) else vec)]
        if len(values) != 7:
            raise ValueError(f"A pose vector has 7 values, got {len(values)}")
        return cls((values[0], values[1], values[2]), (values[3], values[4], values[5], values[6]))

    def to_vector(self) -> list[float]:
        """The 7-vector ``[x, y, z, qw, qx, qy, qz]``."""
        return [*self.p, *self.q]

    @classmethod
    def from_sapien(cls, pose: SapienLikePose) -> Pose:
        """Convert a ``sapien.Pose`` (or anything with ``.p`` and ``.q``)."""
        return cls.from_vector([*(float(v) for v in pose.p), *(float(v) for v in pose.q)])

    @classmethod
    def coerce(cls, value: Pose | SapienLikePose | Sequence[float] | SupportsToList) -> Pose:
        """Accept a Pose, a sapien-like pose or a 7-vector."""
        if isinstance(value, Pose):
            return value
        if isinstance(value, SapienLikePose):
            return cls.from_sapien(value)
        return cls.from_vector(value)

    def with_position(self, p: Sequence[float]) -> Pose:
        x, y, z = (float(v) for v in p)
        return Pose((x, y, z), self.q)


def _decode_pose(data: JSONDict) -> Pose:
    p, q = data["p"], data["q"]
    if not isinstance(p, list) or not isinstance(q, list):
        raise TypeError("A pose value holds the lists 'p' and 'q'")
    return Pose(tuple(p), tuple(q))  # type: ignore[arg-type]  # __post_init__ checks and converts


register_value_type(
    "pose", Pose,
    encode=lambda pose: {"p": list(pose.p), "q": list(pose.q)},
    decode=lambda data: _decode_pose(data),
    keys={"p", "q"},
)
