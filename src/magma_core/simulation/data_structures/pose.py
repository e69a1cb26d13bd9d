"""Our own rigid pose: position xyz + quaternion wxyz (no simulator import)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from magma_core.serialization import register_value_type


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
    def from_vector(cls, vec: Sequence[float] | Any) -> Pose:
        """Build from a 7-vector ``[x, y, z, qw, qx, qy, qz]`` (list, numpy or torch)."""
        values = [float(v) for v in (vec.tolist() if hasattr(vec, "tolist") else vec)]
        if len(values) != 7:
            raise ValueError(f"A pose vector has 7 values, got {len(values)}")
        return cls(tuple(values[:3]), tuple(values[3:]))

    def to_vector(self) -> list[float]:
        """The 7-vector ``[x, y, z, qw, qx, qy, qz]``."""
        return [*self.p, *self.q]

    @classmethod
    def from_sapien(cls, pose: Any) -> Pose:
        """Convert a ``sapien.Pose`` (or anything with ``.p`` and ``.q``)."""
        return cls(tuple(float(v) for v in pose.p), tuple(float(v) for v in pose.q))

    @classmethod
    def coerce(cls, value: Any) -> Pose:
        """Accept a Pose, a sapien-like pose or a 7-vector."""
        if isinstance(value, Pose):
            return value
        if hasattr(value, "p") and hasattr(value, "q"):
            return cls.from_sapien(value)
        return cls.from_vector(value)

    def with_position(self, p: Sequence[float]) -> Pose:
        return Pose(tuple(p), self.q)


register_value_type(
    "pose", Pose,
    encode=lambda pose: {"p": list(pose.p), "q": list(pose.q)},
    decode=lambda data: Pose(tuple(data["p"]), tuple(data["q"])),
    keys={"p", "q"},
)
