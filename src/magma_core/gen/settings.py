"""How a generation's trees grow: the settings ``magma gen`` and :class:`~magma_core.gen.spec.GenSpec` set.

``shape()`` is what a resumed generation must keep (the store refuses a resume that changes
it); the node budget and the tree count may grow between runs of the same generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from magma_core.runs.limits import LoopLimits

__all__ = ["GenSettings"]


@dataclass
class GenSettings:
    """How trees grow. ``branches`` B, ``max_per_stage`` K, ``max_nodes`` M (candidates in
    all trees), ``trees`` T with seeds ``seed + t``; ``limits``: when a branch ends as an
    episode of ``magma run`` would (the same :class:`LoopLimits`)."""

    branches: int = 2
    max_per_stage: int = 10
    max_nodes: int = 200
    trees: int = 1
    seed: int = 0
    limits: LoopLimits = field(default_factory=LoopLimits)
    single_output: bool = False  # ask once per candidate (also when the agent says so)

    def shape(self) -> dict[str, Any]:
        """The settings a resumed generation must keep."""
        return {"branches": self.branches, "max_per_stage": self.max_per_stage, "seed": self.seed,
                "max_idle_decisions": self.limits.max_idle_decisions,
                "max_decisions": self.limits.max_decisions}
