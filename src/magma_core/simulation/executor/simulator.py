"""``Simulator``: what the engine needs from a simulator batch (a typed seam).

``SimBatch`` (``magma_core.simulation.envs``) implements it on ManiSkill; the engine tests'
kinematic stand-in implements it without a physics engine. The engine never touches a
simulator beyond these members; motion goes through the motion seam (``executor.motion``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from magma_core.simulation.data_structures.state_tree import StateNode, StateTree

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.envs.sim_batch import WorldSnapshot


@runtime_checkable
class Simulator(Protocol):
    """N slots of one world, whose batched state is a nested dict of tensors."""

    num_slots: int
    robot_names: list[str]

    def robots(self, slot: int = 0) -> Mapping[str, object]:
        """Robot name -> the robot object of ``slot`` (tools bind to them)."""
        ...

    def reset(
        self, seed: int | Sequence[int | None] | None = None, slots: Iterable[int] | None = None
    ) -> object:
        """Start new episodes in ``slots`` (default all) with the given seeds."""
        ...

    def observe(self) -> dict[str, object]:
        """The batched observation of every slot."""
        ...

    def get_state(self) -> StateTree:
        """The batched env state (leading slot dimension)."""
        ...

    def set_state(self, state: Mapping[str, StateNode], slots: Iterable[int] | None = None) -> None:
        """Write ``state``'s rows of ``slots`` (default all) into the simulator."""
        ...

    def save_slot(self, slot: int) -> WorldSnapshot:
        """A snapshot of one slot's world."""
        ...

    def restore_slot(self, slot: int, snapshot: WorldSnapshot, *, seed: int | None = None) -> None:
        """Put a snapshot taken by :meth:`save_slot` back into ``slot``."""
        ...

    def close(self) -> None:
        """Release the simulator."""
        ...
