"""``PlacementGrid``: free spots in an area for tools that put things down, shared by the
calls of one tool batch through ``ToolBatchContext`` reservations (two robots placing in the
same zone at once get different spots). Occupancy that must outlive the batch belongs in the
env state; reservations only last for the request."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from magma_core.simulation.data_structures import ToolBatchContext

__all__ = ["PlacementGrid"]


class PlacementGrid:
    """``rows`` x ``cols`` spots, ``spacing`` metres apart, centred on an area's centre."""

    NAMESPACE = "placement_grid"

    def __init__(self, rows: int = 2, cols: int = 2, spacing: float = 0.06) -> None:
        if rows < 1 or cols < 1 or not spacing > 0:
            raise ValueError("PlacementGrid needs rows, cols >= 1 and spacing > 0")
        self.rows, self.cols, self.spacing = rows, cols, spacing

    def spots(self, center: Sequence[float]) -> list[tuple[float, float]]:
        """Every spot's (x, y), row by row."""
        x0 = center[0] - (self.rows - 1) * self.spacing / 2
        y0 = center[1] - (self.cols - 1) * self.spacing / 2
        return [(x0 + r * self.spacing, y0 + c * self.spacing)
                for r in range(self.rows) for c in range(self.cols)]

    def free_spot(self, center: Sequence[float], occupied: Sequence[Sequence[float]],
                  min_distance: float | None = None) -> tuple[float, float] | None:
        """The first spot farther than ``min_distance`` (default: the spacing, minus a
        little) from every ``occupied`` xy; None when the area is full."""
        gap = self.spacing * 0.9 if min_distance is None else min_distance
        for x, y in self.spots(center):
            if all((x - o[0]) ** 2 + (y - o[1]) ** 2 >= gap ** 2 for o in occupied):
                return (x, y)
        return None

    def reserve(self, context: ToolBatchContext | None, area: str, center: Sequence[float],
                occupied: Sequence[Sequence[float]], owner: Hashable) -> tuple[float, float] | None:
        """A free spot no other call of the batch reserved (``context.try_reserve``), or None."""
        taken = [] if context is None else [
            key[1] for key in context.get_reservations(self.NAMESPACE) if key[0] == area]
        gap = self.spacing * 0.9
        for spot in self.spots(center):
            if any((spot[0] - o[0]) ** 2 + (spot[1] - o[1]) ** 2 < gap ** 2 for o in [*occupied, *taken]):
                continue
            if context is None or context.try_reserve(self.NAMESPACE, (area, spot), owner):
                return spot
        return None
