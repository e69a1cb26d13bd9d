"""The trace agent: replays a task's perfect trace, decision by decision, with no model.

Stateless per request: the position in the trace travels in the memory it returns
(``memory["trace_cursor"]``, the index of the next decision), so it also works behind
``magma serve-agent``. Every candidate of an input gets the same decision.
"""

from __future__ import annotations

import copy

from magma_core.agents.base import Candidate, CandidateAgent, robot_names
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentDecision, AgentInput
from magma_core.simulation.data_structures.decisions import Decision
from magma_core.simulation.tasks.perfect_trace import PerfectTrace

CURSOR_KEY = "trace_cursor"


class TraceAgent(CandidateAgent):
    """Replays ``trace.decisions()``; a message event becomes a ``say``.

    A tool call without a robot is aimed at the only robot in ``attributes["known_robots"]``;
    with several robots it becomes an error candidate. Once the trace is exhausted every
    further candidate is an error (``trace_exhausted``).
    """

    agent_id = "magma.trace"
    component = "trace"
    concurrent = True  # stateless: any number of requests in flight

    def __init__(self, trace: PerfectTrace | list[Decision]) -> None:
        self.decisions: list[Decision] = (
            list(trace) if isinstance(trace, list) else trace.decisions()
        )

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        memory = agent_input.memory
        cursor = memory.get(CURSOR_KEY, 0)
        if not isinstance(cursor, int) or isinstance(cursor, bool) or cursor < 0:
            return self._fail("invalid_memory", f"memory[{CURSOR_KEY!r}] must be an int >= 0, got {cursor!r}", memory)
        if cursor >= len(self.decisions):
            return self._fail(
                "trace_exhausted",
                f"the trace has {len(self.decisions)} decisions and all were replayed",
                memory,
            )
        robots = robot_names(agent_input.attributes)
        default_robot = robots[0] if len(robots) == 1 else None
        try:
            decision = AgentDecision.from_decision(self.decisions[cursor], default_robot)
        except ValueError as exc:
            return self._fail("missing_robot", f"trace decision {cursor}: {exc}", memory)
        new_memory: JSONDict = copy.deepcopy(memory)
        new_memory[CURSOR_KEY] = cursor + 1
        step = {"id": f"{request_id}:{agent_input.id}:{candidate_index}", "component": self.component,
                "origin": "model", "trace_index": cursor}
        return Candidate(memory=new_memory, decision=decision, internal_steps=[step])

    def repaired_memory(self, agent_input: AgentInput, repair: JSONDict) -> JSONDict:
        """After a coach's repair: the cursor past the repair's ``reference_index``."""
        return coached_cursor(agent_input.memory, repair)

    def _fail(self, code: str, message: str, memory: JSONDict) -> Candidate:
        return Candidate.fail(code, message, copy.deepcopy(memory), component=self.component)


def coached_cursor(memory: JSONDict, repair: JSONDict) -> JSONDict:
    """``memory`` with the trace cursor just past a coach's repair (its ``reference_index``,
    the repaired decision's position in the trace; unchanged without one)."""
    out = copy.deepcopy(memory)
    index = repair.get("reference_index")
    if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
        out[CURSOR_KEY] = index + 1
    return out
