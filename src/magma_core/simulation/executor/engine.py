"""``Engine``: the shape of the execution engine as drivers see it (a ``typing.Protocol``).

:class:`~magma_core.simulation.executor.Executor` has it, and so has the public-vocabulary
wrapper (:class:`~magma_core.simulation.executor.vocabulary.PublicVocabularyExecutor`): the run
loop, the generator and the tool tester are written against it, never against either class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.simulation.executor.records import AgentView, StepOutcome
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.simulation.tasks import BaseTask

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.records import EpisodeRecord
    from magma_core.simulation.stage import BaseTaskStage


@runtime_checkable
class Engine(Protocol):
    """N slots, each running one episode: reset a slot, read what its agent sees, submit
    decisions for several slots at once, read their status and record, snapshot and restore
    a whole slot."""

    @property
    def num_slots(self) -> int: ...

    @property
    def robot_names(self) -> list[str]: ...

    def reset(self, seed: int | Sequence[int | None] | None = None) -> None: ...

    def reset_slot(self, slot: int, seed: int | None = None, task: BaseTask | None = None) -> None: ...

    def task_of(self, slot: int) -> BaseTask: ...

    def stages_for(self, task: BaseTask | None = None) -> list[BaseTaskStage]: ...

    def agent_view(self, slot: int) -> AgentView: ...

    def submit(self, decisions: Mapping[int, Decision | DecisionError]) -> dict[int, StepOutcome]: ...

    def status(self, slot: int) -> str: ...

    def record(self, slot: int) -> EpisodeRecord: ...  # or a record carrying its vocabulary

    def end_episode(self, slot: int, status: str, reason: str = "") -> bool: ...

    def snapshot(self, slot: int, memory: JSONDict | None = None) -> SlotSnapshot: ...

    def restore(self, slot: int, snapshot: SlotSnapshot) -> None: ...

    def snapshot_to_bytes(self, snapshot: SlotSnapshot, *, steps: bool = False) -> bytes: ...

    def close(self) -> None: ...
