"""The noisy-trace agent: the reference solution with plausible mistakes, for branching data
generation without a model (``magma gen --agent noisy-trace[:P]``).

Each candidate is the trace's next decision with probability ``1 - P``; otherwise one of these
mistakes, chosen at random among those that apply:

- ``wrong_argument``: the next decision with one string argument replaced by another value of
  the same attribute list (another object, another area);
- ``skip``: the decision after the next one (the next is skipped);
- ``repeat``: the previous decision again;
- ``message``: a message instead of an action.

Stateless per request like the trace agent: the position in the trace and the mistakes made so
far travel in the memory (``trace_cursor``, ``noise``: ``[kind, candidate index]`` per decision). The random choice of a candidate is a
function of the agent's seed, the input (id, instruction and memory) and the candidate index, so
asking again for the same situation gives the same candidates (a resumed generation re-asks
exactly what it lost) while the B candidates of one situation differ.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random

from magma_core.agents.base import Candidate, CandidateAgent, robot_names
from magma_core.agents.trace import CURSOR_KEY, coached_cursor
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentDecision, AgentInput
from magma_core.simulation.data_structures.decisions import Decision, ToolCall
from magma_core.simulation.tasks.perfect_trace import PerfectTrace

NOISE_KEY = "noise"
MISTAKES = ("wrong_argument", "skip", "repeat", "message")
DEFAULT_NOISE = 0.3
MISTAKE_MESSAGE = "I am not sure what to do next; could you tell me more?"


class NoisyTraceAgent(CandidateAgent):
    """Replays ``trace`` with probability ``1 - noise`` per candidate, else a mistake.

    ``seed`` makes the choices reproducible (see the module docstring). Once the trace is
    exhausted every further candidate is an error (``trace_exhausted``), as for the trace agent.
    """

    agent_id = "magma.noisy_trace"
    component = "noisy_trace"

    def __init__(
        self, trace: PerfectTrace | list[Decision], noise: float = DEFAULT_NOISE, seed: int = 0
    ) -> None:
        if not isinstance(noise, int | float) or isinstance(noise, bool) or not 0 <= noise <= 1:
            raise ValueError(f"noise must be a probability in [0, 1], got {noise!r}")
        self.decisions: list[Decision] = (
            list(trace) if isinstance(trace, list) else trace.decisions()
        )
        self.noise = float(noise)
        self.seed = int(seed)

    def rng_for(self, agent_input: AgentInput, candidate_index: int) -> random.Random:
        """The random source of one candidate (see the module docstring)."""
        key = json.dumps(
            [self.seed, agent_input.id, agent_input.instruction.content, agent_input.memory,
             candidate_index],
            sort_keys=True,
        )
        return random.Random(hashlib.sha256(key.encode()).digest())

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        memory = agent_input.memory
        cursor = memory.get(CURSOR_KEY, 0)
        if not isinstance(cursor, int) or isinstance(cursor, bool) or cursor < 0:
            return self._fail(
                "invalid_memory", f"memory[{CURSOR_KEY!r}] must be an int >= 0, got {cursor!r}", memory
            )
        if cursor >= len(self.decisions):
            return self._fail(
                "trace_exhausted",
                f"the trace has {len(self.decisions)} decisions and all were replayed",
                memory,
            )
        rng = self.rng_for(agent_input, candidate_index)
        kind, decision, next_cursor = "reference", self.decisions[cursor], cursor + 1
        if rng.random() < self.noise:
            options = self._mistakes(cursor, agent_input.attributes, rng)
            if options:
                kind, decision, next_cursor = options[rng.randrange(len(options))]
        robots = robot_names(agent_input.attributes)
        default_robot = robots[0] if len(robots) == 1 else None
        try:
            wire = AgentDecision.from_decision(decision, default_robot)
        except ValueError as exc:
            return self._fail("missing_robot", f"trace decision {cursor}: {exc}", memory)
        new_memory: JSONDict = copy.deepcopy(memory)
        new_memory[CURSOR_KEY] = next_cursor
        noise = new_memory.get(NOISE_KEY)
        # The candidate index is kept too, so that siblings which both replayed the trace
        # still differ downstream.
        new_memory[NOISE_KEY] = [*(noise if isinstance(noise, list) else []), [kind, candidate_index]]
        step = {
            "id": f"{request_id}:{agent_input.id}:{candidate_index}",
            "component": self.component,
            "origin": "model",
            "trace_index": cursor,
            "noise": kind,
        }
        return Candidate(memory=new_memory, decision=wire, internal_steps=[step])

    def _mistakes(
        self, cursor: int, attributes: JSONDict, rng: random.Random
    ) -> list[tuple[str, Decision, int]]:
        """``(kind, decision, next cursor)`` for every mistake that applies at ``cursor``."""
        reference = self.decisions[cursor]
        out: list[tuple[str, Decision, int]] = []
        wrong = _wrong_argument(reference, attributes, rng)
        if wrong is not None:
            out.append(("wrong_argument", wrong, cursor + 1))
        if cursor + 1 < len(self.decisions):
            out.append(("skip", self.decisions[cursor + 1], cursor + 2))
        if cursor > 0:
            out.append(("repeat", self.decisions[cursor - 1], cursor))
        if reference.tool_calls:
            out.append(("message", Decision(say=MISTAKE_MESSAGE), cursor))
        return out

    def repaired_memory(self, agent_input: AgentInput, repair: JSONDict) -> JSONDict:
        """After a coach's repair: the cursor past it, and ``coached`` in the noise record."""
        memory = coached_cursor(agent_input.memory, repair)
        noise = memory.get(NOISE_KEY)
        memory[NOISE_KEY] = [*(noise if isinstance(noise, list) else []), ["coached", 0]]
        return memory

    def _fail(self, code: str, message: str, memory: JSONDict) -> Candidate:
        return Candidate.fail(code, message, copy.deepcopy(memory), component=self.component)


def _wrong_argument(
    decision: Decision, attributes: JSONDict, rng: random.Random
) -> Decision | None:
    """``decision`` with one string argument swapped for another member of the attribute list
    holding it (another object, another area); None when no argument can be swapped."""
    swaps: list[tuple[int, str, list[str]]] = []
    for i, call in enumerate(decision.tool_calls):
        for name, value in call.arguments.items():
            if not isinstance(value, str):
                continue
            for listed in attributes.values():
                if isinstance(listed, list) and value in listed:
                    others = sorted({v for v in listed if isinstance(v, str) and v != value})
                    if others:
                        swaps.append((i, name, others))
                    break
    if not swaps:
        return None
    i, name, others = swaps[rng.randrange(len(swaps))]
    calls = [ToolCall(c.name, dict(c.arguments), c.target_robot_name) for c in decision.tool_calls]
    calls[i].arguments[name] = others[rng.randrange(len(others))]
    return Decision(say=decision.say, tool_calls=calls)
