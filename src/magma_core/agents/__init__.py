"""Agents: one batched interface, ``Agent.respond(request) -> AgentResponse`` (protocol 2.0).

Built in: :class:`TraceAgent` (replays a perfect trace, no model), :class:`NoisyTraceAgent`
(the trace with plausible mistakes, for generation), :class:`OpenAIChatAgent`
(any OpenAI-compatible chat-completions endpoint) and :class:`HttpAgent` (any protocol 2.0
agent server). :func:`from_spec` builds one from ``trace``, ``noisy-trace[:P]``, ``openai:MODEL[@BASE_URL]`` or
``http://HOST:PORT``. Never imports the simulator.
"""

from magma_core.agents.base import (
    Agent,
    AgentCheckError,
    Candidate,
    CandidateAgent,
    ProtocolVersionError,
    error_output,
    robot_names,
    usage_of,
)
from magma_core.agents.http import HttpAgent
from magma_core.agents.noisy_trace import NoisyTraceAgent
from magma_core.agents.openai_chat import OpenAIChatAgent
from magma_core.agents.spec import AgentSpec, AgentSpecError, build_agent, from_spec, parse_spec
from magma_core.agents.trace import TraceAgent

__all__ = [
    "Agent",
    "AgentCheckError",
    "AgentSpec",
    "AgentSpecError",
    "Candidate",
    "CandidateAgent",
    "HttpAgent",
    "NoisyTraceAgent",
    "OpenAIChatAgent",
    "ProtocolVersionError",
    "TraceAgent",
    "build_agent",
    "error_output",
    "from_spec",
    "parse_spec",
    "robot_names",
    "usage_of",
]
