"""Trace agents for runs and generations whose slots or trees run different tasks.

A plain :class:`~magma_core.agents.trace.TraceAgent` replays one trace. When each episode
(``magma run DEFINITION``, ``--randomized``, benchmark items) or each generation tree runs its
own task, its agent replays that task's trace: :class:`SlotTraceAgent` routes by slot (the
input id), :class:`TreeTraceAgent` by the tree a situation belongs to. Both build the
per-task agent with ``make`` (a ``TraceAgent`` or a ``NoisyTraceAgent``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from magma_core.agents.base import Candidate, CandidateAgent
from magma_core.agents.trace import TraceAgent
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentInput

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.data_structures import Decision
    from magma_core.simulation.tasks.perfect_trace import PerfectTrace


class SlotTraceAgent(CandidateAgent):
    """The trace agent of runs whose episodes differ: each slot replays its own episode's
    trace (``assign`` it when the episode starts). ``make(trace, seed)`` builds a slot's
    agent (default: a ``TraceAgent``; e.g. a ``NoisyTraceAgent`` seeded by the episode)."""

    agent_id = "magma.trace"
    component = "trace"

    def __init__(self, make: Callable[[PerfectTrace | list[Decision], int], CandidateAgent] | None = None) -> None:
        self._agents: dict[int, CandidateAgent] = {}
        self._make = make or (lambda trace, seed: TraceAgent(trace))

    def assign(self, slot: int, trace: PerfectTrace | list[Decision], seed: int = 0) -> None:
        self._agents[slot] = self._make(trace, seed)

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        agent = self._agents.get(int(agent_input.id))
        if agent is None:
            return Candidate.fail("no_trace", f"no trace for input {agent_input.id}",
                                  copy.deepcopy(agent_input.memory), component=self.component)
        return agent.decide(request_id, agent_input, candidate_index)


class TreeTraceAgent(CandidateAgent):
    """The trace agents of a generation whose trees differ: ``make(trace)`` builds a tree's
    agent (a ``TraceAgent`` or ``NoisyTraceAgent``) from its reference trace; the generator
    :meth:`bind`\\ s each situation (the input id) to its tree."""

    agent_id = "magma.tree_trace"
    component = "trace"
    concurrent = True  # each tree's agent is stateless per request

    def __init__(self, make: Callable[[PerfectTrace | list[Decision]], CandidateAgent]) -> None:
        self._make = make
        self._agents: dict[int, CandidateAgent] = {}
        self._tree_of: dict[int, int] = {}

    def add_tree(self, tree: int, trace: PerfectTrace | None) -> None:
        """Replay ``trace`` (a ``PerfectTrace``; None: no trace) in ``tree``."""
        self._agents[tree] = self._make(trace if trace is not None else [])

    def bind(self, situation: int, tree: int) -> None:
        """Answer input id ``situation`` with ``tree``'s agent."""
        self._tree_of[situation] = tree

    def repaired_memory(self, agent_input: AgentInput, repair: JSONDict) -> JSONDict:
        agent = self._agents.get(self._tree_of.get(int(agent_input.id), -1))
        return super().repaired_memory(agent_input, repair) if agent is None else \
            agent.repaired_memory(agent_input, repair)

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        agent = self._agents.get(self._tree_of.get(int(agent_input.id), -1))
        if agent is None:
            return Candidate.fail("no_trace", f"no tree trace for input {agent_input.id}",
                                  dict(agent_input.memory), component=self.component)
        return agent.decide(request_id, agent_input, candidate_index)
