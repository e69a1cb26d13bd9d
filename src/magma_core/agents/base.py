"""The agent interface: ``respond(request) -> response``, batched, never raising on bad output.

:class:`Agent` is what the run loop and the agent server talk to. :class:`CandidateAgent` is
the base of the built-in agents: they implement :meth:`CandidateAgent.decide` for one
candidate, and the base turns every failure (an exception, an invalid decision or memory) into
an ``error`` output, so a response always answers its request exactly.
"""

from __future__ import annotations

import abc
import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pydantic import ValidationError

from magma_core import __version__
from magma_core.agents._http import clip
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import (
    AgentDecision,
    AgentError,
    AgentInfo,
    AgentInput,
    AgentOutput,
    AgentRequest,
    AgentResponse,
)

ROBOTS_ATTRIBUTE = "known_robots"


class AgentCheckError(RuntimeError):
    """The agent cannot be used: unreachable, not ready, or not speaking protocol 2.0."""


class ProtocolVersionError(AgentCheckError):
    """The agent speaks another protocol version than 2.0."""


@dataclass
class NoAnswer:
    """No answer arrived for an input (transport error, timeout, HTTP 429/5xx, agent not
    ready): nothing was decided, so the caller may send the same input again."""

    code: str
    message: str
    outputs: list[AgentOutput] = field(default_factory=list)  # the error outputs, if any


#: What :meth:`Agent.answer` gives per input: its outputs, or :class:`NoAnswer`.
Answer = list[AgentOutput] | NoAnswer


class Agent(abc.ABC):
    """Anything that answers protocol 2.0 requests. Subclasses implement :meth:`respond`.

    ``concurrent`` agents may have several requests in flight at once (``respond`` and
    :meth:`answer` called from several threads); :mod:`magma_core.agents.inflight` sends
    requests to the others one at a time.
    """

    agent_id: str = "magma.agent"
    agent_version: str = __version__
    concurrent: bool = False

    def info(self) -> AgentInfo:
        """What ``GET /v1/info`` answers for this agent."""
        return AgentInfo(agent_id=self.agent_id, agent_version=self.agent_version)

    def check(self) -> AgentInfo:
        """Fail fast before a run: raise :class:`AgentCheckError` if the agent is unusable."""
        return self.info()

    @abc.abstractmethod
    def respond(self, request: AgentRequest) -> AgentResponse:
        """Answer every candidate of ``request``, in order. Never raises on bad agent output:
        such candidates come back with ``status="error"``."""

    def answer(self, request: AgentRequest) -> dict[int, Answer]:
        """Each input's outputs by input id, or :class:`NoAnswer` where no answer arrived (the
        caller retries those). The default calls :meth:`respond`, so every input gets outputs;
        inputs the response does not answer are left out."""
        return outputs_by_input(self.respond(request))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; the default does nothing."""

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Candidate:
    """One candidate as an agent produced it: a decision or an error, the memory, the steps."""

    memory: JSONDict
    decision: AgentDecision | None = None
    error: AgentError | None = None
    internal_steps: list[JSONDict] = field(default_factory=list)

    @classmethod
    def fail(
        cls,
        code: str,
        message: str,
        memory: JSONDict,
        internal_steps: list[JSONDict] | None = None,
        component: str | None = None,
    ) -> Candidate:
        """An error candidate; ``memory`` should be the input memory, unchanged."""
        return cls(
            memory=memory,
            error=AgentError(code=code, message=clip(message or code, 2000), component=component),
            internal_steps=internal_steps or [],
        )


def error_output(
    request_id: str,
    agent_input: AgentInput,
    candidate_index: int,
    code: str,
    message: str,
    component: str | None = None,
    internal_steps: list[JSONDict] | None = None,
) -> AgentOutput:
    """An ``error`` output for one candidate; its memory is the input memory, unchanged."""
    return AgentOutput(
        request_id=request_id,
        source_id=agent_input.id,
        candidate_index=candidate_index,
        status="error",
        memory=copy.deepcopy(agent_input.memory),
        internal_steps=internal_steps or [],
        error=AgentError(code=code, message=clip(message or code, 2000), component=component),
    )


def robot_names(attributes: JSONDict) -> list[str]:
    """The robots named in ``attributes["known_robots"]`` (a list, or a dict keyed by name)."""
    robots = attributes.get(ROBOTS_ATTRIBUTE) or []
    if isinstance(robots, dict):
        robots = list(robots)
    if not isinstance(robots, list):
        return []
    return [r for r in robots if isinstance(r, str) and r]


def outputs_by_input(response: AgentResponse) -> dict[int, Answer]:
    """The outputs of ``response`` grouped by the input they answer (``source_id``)."""
    grouped: dict[int, Answer] = {}
    for output in response:
        answer = grouped.setdefault(output.source_id, [])
        assert isinstance(answer, list)
        answer.append(output)
    return grouped


class CandidateAgent(Agent):
    """An agent deciding each candidate on its own; ``concurrency`` candidates at a time.

    An input whose every candidate failed with one of ``unreachable_codes`` (errors this agent
    raises itself when its model endpoint cannot be reached) has :class:`NoAnswer`.
    """

    component: str = "agent"
    concurrency: int = 1
    unreachable_codes: frozenset[str] = frozenset()

    def answer(self, request: AgentRequest) -> dict[int, Answer]:
        grouped = outputs_by_input(self.respond(request))
        for source_id, outputs in grouped.items():
            assert isinstance(outputs, list)
            errors = [o.error for o in outputs if o.status == "error" and o.error is not None]
            if outputs and len(errors) == len(outputs) and all(
                e.code in self.unreachable_codes and e.component == self.component for e in errors
            ):
                grouped[source_id] = NoAnswer(errors[0].code, errors[0].message, outputs)
        return grouped

    @abc.abstractmethod
    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        """Produce one candidate. Must not mutate ``agent_input.memory``; may raise (the
        exception becomes an ``agent_exception`` error)."""

    def respond(self, request: AgentRequest) -> AgentResponse:
        jobs = [(agent_input, k) for agent_input in request.inputs for k in range(agent_input.num_outputs)]

        def run(job: tuple[AgentInput, int]) -> AgentOutput:
            return self._output(request.request_id, *job)

        if self.concurrency > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs))) as pool:
                outputs = list(pool.map(run, jobs))
        else:
            outputs = [run(job) for job in jobs]
        return AgentResponse(outputs)

    def repaired_memory(self, agent_input: AgentInput, repair: JSONDict) -> JSONDict:
        """The memory after a coach's repair was taken as this agent's decision (default: the
        input memory); a trace agent moves its cursor past the reference decision."""
        return copy.deepcopy(agent_input.memory)

    def _repaired(self, request_id: str, agent_input: AgentInput, index: int, repair: JSONDict) -> Candidate:
        """The candidate for an input carrying a coach's repair (``extra_keys["coaching"]``):
        the repair itself, with memory kept consistent, and no new inference."""
        if not isinstance(repair, dict) or repair.get("kind") not in ("replace_decision", "replace_say"):
            return Candidate.fail("invalid_coaching", f"unknown coaching repair {clip(repr(repair), 200)}",
                                  copy.deepcopy(agent_input.memory), component=self.component)
        if repair["kind"] == "replace_say":
            decision = AgentDecision(say=str(repair.get("text", "")))
        else:
            decision = AgentDecision.model_validate(repair.get("decision"))
        step = {"id": f"{request_id}:{agent_input.id}:{index}", "component": self.component,
                "origin": "coaching", "repair": repair["kind"]}
        return Candidate(memory=self.repaired_memory(agent_input, repair), decision=decision,
                         internal_steps=[step])

    def _output(self, request_id: str, agent_input: AgentInput, index: int) -> AgentOutput:
        try:
            repair = agent_input.extra_keys.get("coaching")
            if repair is not None:
                candidate = self._repaired(request_id, agent_input, index, repair)
            else:
                candidate = self.decide(request_id, agent_input, index)
        except Exception as exc:  # agent bugs must not crash a run
            return error_output(
                request_id, agent_input, index, "agent_exception",
                f"{type(exc).__name__}: {exc}", self.component,
            )
        try:
            return AgentOutput(
                request_id=request_id,
                source_id=agent_input.id,
                candidate_index=index,
                status="completed" if candidate.error is None else "error",
                memory=candidate.memory,
                internal_steps=candidate.internal_steps,
                output=candidate.decision if candidate.error is None else None,
                error=candidate.error,
            )
        except ValidationError as exc:
            return error_output(
                request_id, agent_input, index, "invalid_output",
                f"the agent produced an invalid output: {exc}", self.component,
                _json_safe_steps(candidate.internal_steps),
            )


def _json_safe_steps(steps: list[JSONDict]) -> list[JSONDict]:
    try:
        AgentOutput(
            request_id="x", source_id=0, candidate_index=0, status="error", memory={},
            internal_steps=steps, error=AgentError(code="x", message="x"),
        )
        return steps
    except ValidationError:
        return [{"component": "agent", "output_raw": clip(repr(steps))}]


def usage_of(output: AgentOutput) -> dict[str, float]:
    """Token counts and model latency recorded in an output's internal steps, summed.

    Returns ``{"prompt_tokens", "completion_tokens", "total_tokens", "latency_s", "calls"}``;
    steps without a ``usage`` or ``latency_s`` entry contribute nothing.
    """
    total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "latency_s": 0.0, "calls": 0}
    for step in output.internal_steps:
        usage = step.get("usage")
        if isinstance(usage, dict):
            total["calls"] += 1
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    total[key] += value
        latency = step.get("latency_s")
        if isinstance(latency, int | float) and not isinstance(latency, bool):
            total["latency_s"] += float(latency)
    return total
