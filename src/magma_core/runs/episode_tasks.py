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

from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.runs.loop import EpisodeState, RunLoop, initial_memory
from magma_core.scenarios.episode_tasks import EpisodeTasks


class ProceduralRunLoop(RunLoop):
    """A ``RunLoop`` whose episodes get their task and vocabulary from ``episode_tasks``.

    ``executor`` is a ``PublicVocabularyExecutor``; ``agent`` a ``SlotTraceAgent`` gets each
    episode's trace (in its public vocabulary).
    """

    def __init__(self, episode_tasks: EpisodeTasks, *args: object, **kwargs: object) -> None:
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
