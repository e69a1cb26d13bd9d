"""Coaching wire models (the predecessor's ``agent_coaching`` routes, protocol 2.0).

Routes an agent server may offer (``magma serve-agent`` mounts them, and advertises them in
``/v1/info`` with ``specialized_coaching`` and ``coaching_session_version="1"``):

- ``PUT /v1/coaching/sessions/{run_id}`` with a :class:`CoachingSessionConfig` -> 204; the same
  run reconfigured differently -> 409.
- ``POST /v1/coaching`` with a :class:`CoachingRequest` -> :class:`CoachingResponse`; an
  unknown or closing session -> 404.
- ``DELETE /v1/coaching/sessions/{run_id}`` -> 204 (404 when unknown).

A request carries the stage's trajectory (each step: the agent input, the decision or error,
the execution summary, whether it is diagnosable), the terminal feedback and the reinjection
points (one per diagnosable step, ``replace:<step>``; ``recovery:<step>`` where a failed call's
feedback can be kept). A ``corrected`` response names its points and carries each repair as
``extra_keys`` (``{"kind": "replace_decision", "decision": {say, tool_calls}}`` or
``{"kind": "replace_say", "text": ...}``), which the generator hands to the agent under
``AgentInput.extra_keys["coaching"]``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentDecision, ContractModel, JsonObject, NonEmptyStr

COACHING_SESSION_VERSION = "1"
#: The kinds of specialized coaching (``AgentInfo.specialized_coaching``).
COACHING_KINDS = ("failure", "suboptimal", "format")
REPAIR_KINDS = ("replace_decision", "replace_say")


class CoachingSessionConfig(ContractModel):
    """``PUT /v1/coaching/sessions/{run_id}``: how the agent's coaching service runs.

    ``builtin``: the served agent's own knowledge (e.g. a trace agent's reference); ``llm``
    needs ``backends``; ``human`` needs ``endpoint``."""

    provider: Literal["builtin", "llm", "human"] = "builtin"
    backends: list[JsonObject] = Field(default_factory=list)
    endpoint: str | None = None
    connect_timeout: float = Field(default=10.0, gt=0)
    capture_logs: bool = False

    @model_validator(mode="after")
    def _provider_needs(self) -> CoachingSessionConfig:
        if self.provider == "llm" and not self.backends:
            raise ValueError("provider 'llm' needs at least one backend")
        if self.provider == "human" and not self.endpoint:
            raise ValueError("provider 'human' needs an endpoint")
        return self


class CoachingStage(ContractModel):
    index: int = Field(ge=0)
    goal: str = ""
    hint: str | None = None


class CoachingStep(ContractModel):
    """One decision of the trajectory: the input it answered and what came of it."""

    id: int = Field(ge=0)
    input: JsonObject
    decision: JsonObject | None = None
    error: JsonObject | None = None
    execution: JsonObject | None = None
    diagnosable: bool = True


class ReinjectionPoint(ContractModel):
    """Where a repair may go: exactly one of ``input_step_id`` (that step's input, rewound)
    or ``input`` (an explicit input, e.g. keeping a failed call's feedback)."""

    id: NonEmptyStr
    input_step_id: int | None = None
    input: JsonObject | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ReinjectionPoint:
        if (self.input_step_id is None) == (self.input is None):
            raise ValueError("a reinjection point has exactly one of input_step_id and input")
        return self


class CoachingDiagnosis(ContractModel):
    """The decision to repair (``step_id``), why, and what was expected there."""

    step_id: int = Field(ge=0)
    explanation: str = ""
    expected_decision: JsonObject | None = None


class CoachingRequest(ContractModel):
    """``POST /v1/coaching``: one correction opportunity of a generation."""

    run_id: NonEmptyStr
    request_id: NonEmptyStr
    kind: Literal["failure", "suboptimal", "format"]
    event: NonEmptyStr
    stage: CoachingStage
    target_step_id: int | None = None  # set when the diagnosis is deterministic
    trajectory: list[CoachingStep] = Field(min_length=1)
    reinjection_points: list[ReinjectionPoint] = Field(min_length=1)
    feedback: str = ""
    active_errors: list[JsonObject] = Field(default_factory=list)
    diagnosis: CoachingDiagnosis | None = None
    additional_info: JsonObject = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> CoachingRequest:
        ids = [s.id for s in self.trajectory]
        if len(set(ids)) != len(ids):
            raise ValueError("trajectory step ids must be unique")
        if self.target_step_id is not None and self.target_step_id not in ids:
            raise ValueError(f"target_step_id {self.target_step_id} is not in the trajectory")
        points = [p.id for p in self.reinjection_points]
        if len(set(points)) != len(points):
            raise ValueError("reinjection point ids must be unique")
        for point in self.reinjection_points:
            if point.input_step_id is not None and point.input_step_id not in ids:
                raise ValueError(f"reinjection point {point.id!r} names step {point.input_step_id}, "
                                 "which is not in the trajectory")
        return self

    def point(self, point_id: str) -> ReinjectionPoint | None:
        return next((p for p in self.reinjection_points if p.id == point_id), None)


class CoachingProposal(ContractModel):
    reinjection_point_id: NonEmptyStr
    extra_keys: JsonObject


class CoachingLog(ContractModel):
    coaching_type: str
    content: str


class CoachingResponse(ContractModel):
    """The coach's answer: ``corrected`` with proposals, or ``abandoned``/``error`` with a
    reason and none."""

    request_id: NonEmptyStr
    status: Literal["corrected", "abandoned", "error"]
    reason: str | None = None
    proposals: list[CoachingProposal] = Field(default_factory=list)
    diagnosis: CoachingDiagnosis | None = None
    logs: list[CoachingLog] = Field(default_factory=list)

    @model_validator(mode="after")
    def _status_matches(self) -> CoachingResponse:
        if self.status == "corrected" and not self.proposals:
            raise ValueError("a corrected response needs at least one proposal")
        if self.status != "corrected" and (self.proposals or not self.reason):
            raise ValueError(f"an {self.status} response needs a reason and no proposals")
        for proposal in self.proposals:
            check_repair(proposal.extra_keys)
        return self

    def validate_request(self, request: CoachingRequest) -> CoachingResponse:
        """Check that this answers ``request``: same id, known reinjection points."""
        if self.request_id != request.request_id:
            raise ValueError(f"response is for request {self.request_id!r}, not {request.request_id!r}")
        for proposal in self.proposals:
            if request.point(proposal.reinjection_point_id) is None:
                raise ValueError(f"unknown reinjection point {proposal.reinjection_point_id!r}")
        return self


def check_repair(repair: JSONDict) -> JSONDict:
    """``repair`` if it is a valid ``replace_decision``/``replace_say`` payload; else
    ``ValueError`` saying why."""
    kind = repair.get("kind")
    if kind == "replace_decision":
        AgentDecision.model_validate(repair.get("decision"))
    elif kind == "replace_say":
        text = repair.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("replace_say needs a non-empty 'text'")
    else:
        raise ValueError(f"repair kind must be one of {', '.join(REPAIR_KINDS)}, got {kind!r}")
    return repair


__all__ = [
    "COACHING_KINDS", "COACHING_SESSION_VERSION", "CoachingDiagnosis", "CoachingLog",
    "CoachingProposal", "CoachingRequest", "CoachingResponse", "CoachingSessionConfig",
    "CoachingStage", "CoachingStep", "ReinjectionPoint", "check_repair",
]
