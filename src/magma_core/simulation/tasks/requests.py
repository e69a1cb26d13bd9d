"""``BaseRequest``: a kind of user request, and the stages (and reference solution) it makes.

A task generator picks requests by ``sampling_weight``, draws their parameters with its own
seeded ``random.Random`` (never the global one: same seed, same task), asks each for its
stages and reference trace events, then lets it update the ``TaskState``::

    class SortCube(BaseRequest[dict]):
        def sample_parameters(self, state, rng):
            return {"object": rng.choice(state.attributes["objects"]), "zone": "zone_a"}

        def create_stages(self, state, params):
            return [ObjectsToZones({params["object"]: params["zone"]}, "...", True)]

        def perfect_trace(self, state, params):
            return [UserEvent("..."), ToolCallEvent([...]), ToolCallEvent([...]),
                    MessageEvent("done")]

        def apply_request(self, state, params):
            state.relations["object_area"][params["object"]] = params["zone"]
            return state
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Generic, TypeVar

from magma_core.simulation.data_structures.task_state import TaskState
from magma_core.simulation.tasks.perfect_trace import TraceEvent

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.stage import BaseTaskStage

ParametersT = TypeVar("ParametersT")


class BaseRequest(Generic[ParametersT]):
    """A stage factory. Override ``sample_parameters`` and ``create_stages``; optionally
    ``sampling_weight``, ``apply_request``, ``perfect_trace`` and ``describe``.

    ``request_type`` (class attribute, default: the class name) is stamped on every stage
    the request creates.
    """

    request_type: str | None = None

    @classmethod
    def get_request_type(cls) -> str:
        return cls.request_type or cls.__name__

    def sampling_weight(self, state: TaskState) -> float:
        """Relative chance to be picked in ``state``; <= 0 excludes the request."""
        return 1.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> ParametersT:
        """The request's parameters, drawn with ``rng`` only (JSON-compatible values)."""
        raise NotImplementedError(f"{type(self).__name__} must implement sample_parameters")

    def create_stages(self, state: TaskState, params: ParametersT) -> list[BaseTaskStage]:
        """The stages of the request (answer flags allowed: completion stages follow)."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_stages")

    def apply_request(self, state: TaskState, params: ParametersT) -> TaskState:
        """The state after the request was carried out (default: unchanged)."""
        return state

    def force_state_recompute(self) -> bool:
        """True to rebuild the state from the starting state after this request."""
        return False

    def perfect_trace(self, state: TaskState, params: ParametersT) -> list[TraceEvent] | None:
        """The reference events that solve this request's stages optimally (a
        ``MessageEvent`` for each completion answer), or None when unknown."""
        return None

    def describe(self, params: ParametersT) -> str:
        """One line for ``magma scenarios test-requests``."""
        return f"{self.get_request_type()} {params}"

    def combination(self, params: ParametersT) -> tuple[str, ...] | None:
        """What the parameters combine, as plain strings (e.g. object, zone and instruction
        template), for the leak checks of held-out splits (``magma_core.bench.splits``): a
        held-out combination must never be one the training definitions produce. None (the
        default): the request's parameters are not checked."""
        return None
