"""``Engine``: the shape of the execution engine as drivers see it (a ``typing.Protocol``).

:class:`~magma_core.simulation.executor.Executor` has it, and so has the public-vocabulary
wrapper (:class:`~magma_core.simulation.executor.vocabulary.PublicVocabularyExecutor`): the run
loop, the generator and the tool tester are written against it, never against either class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.simulation.executor.records import AgentView, StepOutcome
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.simulation.tasks import BaseTask


@runtime_checkable
class Engine(Protocol):
    """N slots, each running one episode: reset a slot, read what its agent sees, submit
    decisions for several slots at once, read their status and record, snapshot and restore
    a whole slot."""

    @property
    def num_slots(self) -> int: ...

    @property
    def robot_names(self) -> list[str]: ...

    def reset(self, seed: Any = None) -> None: ...

    def reset_slot(self, slot: int, seed: int | None = None, task: BaseTask | None = None) -> None: ...

    def task_of(self, slot: int) -> BaseTask: ...

    def stages_for(self, task: BaseTask | None = None) -> list[Any]: ...

    def agent_view(self, slot: int) -> AgentView: ...

    def submit(self, decisions: Mapping[int, Decision | DecisionError]) -> dict[int, StepOutcome]: ...

    def status(self, slot: int) -> str: ...

    def record(self, slot: int) -> Any: ...  # an EpisodeRecord (or one carrying its vocabulary)

    def end_episode(self, slot: int, status: str, reason: str = "") -> bool: ...

    def snapshot(self, slot: int, memory: dict[str, Any] | None = None) -> SlotSnapshot: ...

    def restore(self, slot: int, snapshot: SlotSnapshot) -> None: ...

    def snapshot_to_bytes(self, snapshot: SlotSnapshot, *, steps: bool = False) -> bytes: ...

    def close(self) -> None: ...
