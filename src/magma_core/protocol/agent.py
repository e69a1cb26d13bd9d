"""Agent HTTP protocol 2.0: the wire models exchanged with an agent.

Transport: ``GET /health`` -> :class:`AgentHealth`, ``GET /v1/info`` -> :class:`AgentInfo`,
``POST /v1/responses`` with an :class:`AgentRequest` -> :class:`AgentResponse` (a JSON array).

Every model is strict: no type coercion, unknown fields rejected, NaN/Infinity rejected (also
inside free-form JSON objects). :meth:`AgentResponse.validate_request` checks that a response
answers a request exactly: same request id, inputs in request order, candidates ``0..n-1`` in
ascending order, nothing missing, nothing extra.

Where MAGMA puts things the wire models do not name (all inside free-form JSON, so the models
stay strict and compatible with other protocol 2.0 tools):

- robot names: ``AgentInput.attributes["known_robots"]`` (a list of strings);
- token counts and latency of model calls: entries of ``AgentOutput.internal_steps`` carrying
  ``"usage": {"prompt_tokens", "completion_tokens", "total_tokens"}`` and ``"latency_s"``
  (see :func:`magma_core.agents.base.usage_of`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    Strict,
    model_validator,
)

if TYPE_CHECKING:  # engine types, only for annotations
    from collections.abc import Iterator

    from magma_core.simulation.data_structures.decisions import Decision

PROTOCOL_VERSION: Final = "2.0"


def _check_json_object(value: dict[str, Any]) -> dict[str, Any]:
    """Reject anything that is not plain JSON: non-str keys, NaN/Inf, non-JSON Python objects."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise ValueError(f"JSON object keys must be strings, got {type(key).__name__}")
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError("NaN and Infinity are not JSON values")
        elif item is not None and not isinstance(item, str | int | bool):
            raise ValueError(f"{type(item).__name__} is not a JSON value")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_check_json_object)]
"""A JSON object: str keys, JSON values only."""

Identifier = Annotated[int, Strict()]
"""An input identifier: a strict int (no bool, no numeric string)."""

NonEmptyStr = Annotated[str, Field(min_length=1)]


class ContractModel(BaseModel):
    """Base of every protocol model: strict, closed, finite."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class AgentInstruction(ContractModel):
    """What the agent must react to: the user's words or the environment's report."""

    type: Literal["user", "env"]
    content: str


class AgentInput(ContractModel):
    """One situation to decide on; ``num_outputs`` candidates are asked for it.

    ``memory`` is agent-owned: the memory returned in an output is fed back unchanged with the
    next input of that episode. ``attributes["known_robots"]`` lists the robots' names.
    """

    id: Identifier
    instruction: AgentInstruction
    tools: list[JsonObject] = Field(default_factory=list)
    attributes: JsonObject = Field(default_factory=dict)
    memory: JsonObject = Field(default_factory=dict)
    num_outputs: int = Field(default=1, gt=0)
    extra_keys: JsonObject = Field(default_factory=dict)


class AgentRequest(ContractModel):
    """A batch of inputs sent in one ``POST /v1/responses``; input ids are unique."""

    request_id: NonEmptyStr
    inputs: list[AgentInput] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> AgentRequest:
        seen: set[int] = set()
        for agent_input in self.inputs:
            if agent_input.id in seen:
                raise ValueError(f"input id {agent_input.id} appears more than once in the request")
            seen.add(agent_input.id)
        return self

    def expected_keys(self) -> list[tuple[str, int, int]]:
        """``(request_id, source_id, candidate_index)`` of every output, in the required order."""
        return [
            (self.request_id, agent_input.id, index)
            for agent_input in self.inputs
            for index in range(agent_input.num_outputs)
        ]


class AgentToolCall(ContractModel):
    """One tool call aimed at one robot."""

    name: NonEmptyStr
    arguments: JsonObject = Field(default_factory=dict)
    target_robot_name: NonEmptyStr

    @classmethod
    def from_engine(cls, call: Any, default_robot: str | None = None) -> AgentToolCall:
        """Build from the engine's ``ToolCall``; a call without a robot takes ``default_robot``."""
        robot = call.target_robot_name or default_robot
        if not robot:
            raise ValueError(f"tool call {call.name!r} names no robot and no default robot is known")
        return cls(name=call.name, arguments=dict(call.arguments), target_robot_name=robot)

    def to_engine(self) -> Any:
        """The engine's ``ToolCall`` for this call (arguments copied)."""
        from magma_core.simulation.data_structures.decisions import ToolCall as EngineToolCall

        return EngineToolCall(self.name, dict(self.arguments), self.target_robot_name)


class AgentDecision(ContractModel):
    """A candidate's decision: a message, tool calls, both (the consumer decides) or neither."""

    say: str = ""
    tool_calls: list[AgentToolCall] = Field(default_factory=list)

    @classmethod
    def from_decision(cls, decision: Decision, default_robot: str | None = None) -> AgentDecision:
        """Build from the engine's ``Decision``; see :meth:`AgentToolCall.from_engine`."""
        return cls(
            say=decision.say,
            tool_calls=[AgentToolCall.from_engine(c, default_robot) for c in decision.tool_calls],
        )

    def to_decision(self) -> Decision:
        """The engine's ``Decision`` for this candidate."""
        from magma_core.simulation.data_structures.decisions import Decision

        return Decision(say=self.say, tool_calls=[c.to_engine() for c in self.tool_calls])


class AgentError(ContractModel):
    """Why a candidate could not be produced."""

    code: NonEmptyStr
    message: NonEmptyStr
    component: str | None = None


class AgentOutput(ContractModel):
    """One candidate answering one input.

    ``completed`` carries ``output`` and no ``error``; ``error`` carries ``error`` and no
    ``output``. ``memory`` is always the complete memory to feed back next time.
    """

    request_id: NonEmptyStr
    source_id: Identifier
    candidate_index: int = Field(ge=0)
    status: Literal["completed", "error"]
    memory: JsonObject
    internal_steps: list[JsonObject] = Field(default_factory=list)
    output: AgentDecision | None = None
    error: AgentError | None = None

    @model_validator(mode="after")
    def _status_matches(self) -> AgentOutput:
        if self.status == "completed" and (self.output is None or self.error is not None):
            raise ValueError("a completed output needs 'output' and no 'error'")
        if self.status == "error" and (self.error is None or self.output is not None):
            raise ValueError("an error output needs 'error' and no 'output'")
        return self

    @property
    def key(self) -> tuple[str, int, int]:
        """``(request_id, source_id, candidate_index)``."""
        return (self.request_id, self.source_id, self.candidate_index)


class AgentResponse(RootModel[list[AgentOutput]]):
    """The answer to an :class:`AgentRequest`: a list of outputs."""

    model_config = ConfigDict(strict=True)

    def validate_request(self, request: AgentRequest) -> AgentResponse:
        """Check this response answers ``request`` exactly; raise ``ValueError`` otherwise.

        The outputs must be, in order, each input in request order and for each its candidates
        ``0..num_outputs-1``. Returns ``self`` so calls can be chained.
        """
        expected = request.expected_keys()
        got = [output.key for output in self.root]
        if got == expected:
            return self
        if len(got) != len(expected):
            raise ValueError(
                f"response has {len(got)} outputs, request {request.request_id!r} asks for "
                f"{len(expected)} (the sum of num_outputs)"
            )
        for position, (have, want) in enumerate(zip(got, expected, strict=True)):
            if have != want:
                raise ValueError(
                    f"output {position} is (request_id={have[0]!r}, source_id={have[1]}, "
                    f"candidate_index={have[2]}); expected (request_id={want[0]!r}, "
                    f"source_id={want[1]}, candidate_index={want[2]})"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> AgentOutput:
        return self.root[index]

    def __iter__(self) -> Iterator[AgentOutput]:  # type: ignore[override]
        return iter(self.root)


class AgentHealth(ContractModel):
    """``GET /health``: ready to answer (an agent may answer 503 while loading)."""

    status: Literal["ready"] = "ready"


class AgentInfo(ContractModel):
    """``GET /v1/info``: who the agent is and what it can do."""

    agent_id: NonEmptyStr
    agent_version: str
    capabilities: dict[str, bool] = Field(default_factory=dict)
    protocol_version: Literal["2.0"] = PROTOCOL_VERSION
    specialized_coaching: list[str] = Field(default_factory=list)
    coaching_resume: bool = False
    coaching_session_version: str | None = None
    coaching_unavailable_reason: str | None = None


__all__ = [
    "PROTOCOL_VERSION",
    "AgentDecision",
    "AgentError",
    "AgentHealth",
    "AgentInfo",
    "AgentInput",
    "AgentInstruction",
    "AgentOutput",
    "AgentRequest",
    "AgentResponse",
    "ContractModel",
    "Identifier",
    "JsonObject",
    "AgentToolCall",
]
