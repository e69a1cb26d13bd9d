"""Interaction request templates (the predecessor's ``interact_request`` module).

``BaseConstraintRequest``: the user states a rule; one rule stage (acknowledged, SAY_ONLY by
default, or judged ``ConstraintBaseStage`` with ``judged=True``; ``reset_at_end`` True by
default) and the sampled constraints applied to the state. Subclasses implement
``sample_constraints(state, rng)``. ``BaseAttributesModifRequest`` applies an attribute
snapshot through ``AttributesModifConstraint`` and asks for a state replay.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

from magma_core.json_types import JSONDict
from magma_core.simulation.stage import BaseTaskStage, ConstraintBaseStage
from magma_core.simulation.tasks import (
    AttributesModifConstraint,
    BaseConstraint,
    BaseRequest,
    MessageEvent,
    TaskState,
    TraceEvent,
    UserEvent,
)
from magma_scenarios.common.stages import Acknowledge

__all__ = ["AttributesModificationParameters", "BaseAttributesModifRequest",
           "BaseConstraintRequest", "ConstraintParameters"]


@dataclass(frozen=True)
class ConstraintParameters:
    """The sampled constraints and the instruction that states them."""

    constraints: tuple[BaseConstraint, ...]
    instruction: str
    acknowledgement: str = "Understood, I will follow this rule."


@dataclass(frozen=True)
class AttributesModificationParameters:
    """A copy of the attributes the request installs."""

    attributes: JSONDict = field(default_factory=dict)


class BaseConstraintRequest(BaseRequest[ConstraintParameters]):
    """A rule request: one rule stage, then the constraints hold in the state."""

    reset_at_end: bool = True

    def __init__(self, judged: bool = False, reset_at_end: bool | None = None) -> None:
        self.judged = judged
        if reset_at_end is not None:
            self.reset_at_end = reset_at_end

    def sample_constraints(self, state: TaskState, rng: random.Random) -> ConstraintParameters:
        raise NotImplementedError(f"{type(self).__name__} must implement sample_constraints")

    def sample_parameters(self, state: TaskState, rng: random.Random) -> ConstraintParameters:
        return self.sample_constraints(state, rng)

    def create_stages(self, state: TaskState, params: ConstraintParameters) -> list[BaseTaskStage]:
        if self.judged:
            return [ConstraintBaseStage(params.instruction, reset_at_end=self.reset_at_end)]
        return [Acknowledge(params.instruction)]

    def apply_request(self, state: TaskState, params: ConstraintParameters) -> TaskState:
        for constraint in params.constraints:
            state = constraint.apply(state)
        return state

    def perfect_trace(self, state: TaskState, params: ConstraintParameters) -> list[TraceEvent]:
        return [UserEvent(params.instruction), MessageEvent(params.acknowledgement)]

    def describe(self, params: ConstraintParameters) -> str:
        return f"{self.get_request_type()}: {params.instruction}"


class BaseAttributesModifRequest(BaseRequest[AttributesModificationParameters]):
    """Installs ``params.attributes`` (through ``AttributesModifConstraint``) and asks for a
    replay of the state; builds no stage and samples nothing itself (subclasses do)."""

    def apply_request(self, state: TaskState, params: AttributesModificationParameters) -> TaskState:
        return AttributesModifConstraint(copy.deepcopy(params.attributes)).apply(state)

    def force_state_recompute(self) -> bool:
        return True
