"""What each episode of a run runs: its task and its vocabulary.

A run's target is a preset (one ``BaseTask`` for every episode) or a ``TaskDefinition``
(the episode's seed generates its task). With ``randomized=True`` each episode also gets a
public vocabulary drawn with its seed from the task's randomisation YAML; the mapping is
kept in the generated task's spec and in the episode record.

``ProceduralRunLoop`` is the run loop for such runs: before each episode it gives the slot
its task (``Executor.reset_slot(..., task=...)``) and vocabulary (the
``PublicVocabularyExecutor`` seam), and the trace agent that episode's reference trace,
translated into the public vocabulary.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from magma_core.agents.base import Candidate, CandidateAgent
from magma_core.agents.trace import TraceAgent
from magma_core.protocol.agent import AgentInput
from magma_core.runs.loop import EpisodeState, RunLoop, initial_memory
from magma_core.scenarios.episode_tasks import EpisodeTasks


class SlotTraceAgent(CandidateAgent):
    """The trace agent of runs whose episodes differ: each slot replays its own episode's
    trace (``assign`` it when the episode starts). ``make(trace, seed)`` builds a slot's
    agent (default: a ``TraceAgent``; e.g. a ``NoisyTraceAgent`` seeded by the episode)."""

    agent_id = "magma.trace"
    component = "trace"

    def __init__(self, make: Callable[[Any, int], CandidateAgent] | None = None) -> None:
        self._agents: dict[int, CandidateAgent] = {}
        self._make = make or (lambda trace, seed: TraceAgent(trace))

    def assign(self, slot: int, trace: Any, seed: int = 0) -> None:
        self._agents[slot] = self._make(trace, seed)

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        agent = self._agents.get(int(agent_input.id))
        if agent is None:
            return Candidate.fail("no_trace", f"no trace for input {agent_input.id}",
                                  copy.deepcopy(agent_input.memory), component=self.component)
        return agent.decide(request_id, agent_input, candidate_index)


class ProceduralRunLoop(RunLoop):
    """A ``RunLoop`` whose episodes get their task and vocabulary from ``episode_tasks``.

    ``executor`` is a ``PublicVocabularyExecutor``; ``agent`` a ``SlotTraceAgent`` gets each
    episode's trace (in its public vocabulary).
    """

    def __init__(self, episode_tasks: EpisodeTasks, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.episode_tasks = episode_tasks

    def _start(self, slot: int, episode: int, active: dict[int, EpisodeState]) -> None:
        seed = self.episode_tasks.seed_of(self.seed, episode)
        task = self.episode_tasks.task_of(episode, seed)
        vocabulary = self.episode_tasks.vocabulary(task, seed)
        self.executor.set_vocabulary(slot, vocabulary)
        self.executor.reset_slot(slot, seed, task=task)
        memory = initial_memory(task)
        if vocabulary is not None:
            memory = vocabulary.to_public_value(memory)
        if isinstance(self.agent, SlotTraceAgent):
            trace = task.perfect_trace()
            if trace is not None and vocabulary is not None:
                trace = vocabulary.to_public_trace(trace)
            self.agent.assign(slot, trace if trace is not None else [], seed)
        state = EpisodeState(episode, seed, slot, memory)
        active[slot] = state
        self.listener("start", state, self.executor.agent_view(slot))
