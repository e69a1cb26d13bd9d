"""The run loop: episodes through the one engine, K at a time in its slots, with an agent.

Each slot runs its own episode pipeline (:mod:`magma_core.runs.agent_requests`): its input (the
engine's view of the slot and the slot's agent memory) goes to the agent as soon as its last
decision has executed, and its decision is executed as soon as it arrives. Decisions that
arrive together are executed together in one ``Executor.submit``. ``Pacing(lockstep=True)``
keeps the old schedule (one request for all slots, executed when all have answered) for
comparison. Finished episodes are written to the run store one transaction each; records do
not depend on the order in which answers arrive.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from magma_core.agents.base import Agent
from magma_core.protocol.agent import AgentDecision, AgentInput, AgentOutput
from magma_core.runs.agent_requests import AgentOutage, Pacing, SlotAnswer, SlotPipeline
from magma_core.runs.agent_steps import exchange_of, merge_exchanges
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.limits import (
    DECISION_CAP,
    NO_ACTION,
    TRACE_EXHAUSTED,
    LoopLimits,
    with_failed_calls,
)
from magma_core.runs.observe_images import attach_images
from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.simulation.executor.records import JUDGE_UNAVAILABLE, AgentView, StepOutcome
from magma_core.simulation.tasks import BaseTask
from magma_core.store import EpisodeSummary, RunStore, episode_rows, episode_summary
from magma_core.store.control_steps import pack_control
from magma_core.text_safety import safe_text, safe_value

if TYPE_CHECKING:
    from magma_core.simulation.executor.engine import Engine

__all__ = ["DECISION_CAP", "NO_ACTION", "TRACE_EXHAUSTED", "AgentOutage", "EpisodeState",
           "Listener", "LoopLimits", "RunLoop", "build_input", "decision_of", "initial_memory"]


@dataclass
class EpisodeState:
    """An episode in flight in one slot."""

    episode: int
    seed: int
    slot: int
    memory: dict[str, Any]
    decisions: int = 0
    idle: int = 0
    started: float = field(default_factory=time.perf_counter)
    agent_steps: list[dict[str, Any]] = field(default_factory=list)  # usage per decision
    last_error: DecisionError | None = None  # the last decision, when it was an error
    images: list[tuple] = field(default_factory=list)  # --observe images: store.images rows
    control: list[tuple] = field(default_factory=list)  # --record-control: store.control_steps rows

    def agent_totals(self) -> dict[str, Any]:
        """Tokens, model calls and agent latency summed over the episode's decisions."""
        keys = ("prompt_tokens", "completion_tokens", "total_tokens", "calls", "latency_s")
        totals: dict[str, Any] = {k: sum(step.get(k, 0) for step in self.agent_steps) for k in keys}
        totals["latency_s"] = round(float(totals["latency_s"]), 6)
        return {**totals, "per_decision": self.agent_steps}


def initial_memory(task: BaseTask) -> dict[str, Any]:
    """The agent memory an episode starts with: the task's memory (and history, if any)."""
    situation = task.situation_init
    memory = copy.deepcopy(situation.memory)
    if situation.history:
        memory.setdefault("history", copy.deepcopy(situation.history))
    return memory


def instruction_content(view: AgentView) -> str:
    """The text of the view's input. A delayed input (an interruption after an action stage)
    carries the last batch's status before the user's words: both reach the agent."""
    messages = [m.content for m in view.messages if m.content]
    return "\n\n".join(messages) if len(messages) > 1 else view.instruction


def stage_key(view: AgentView) -> dict[str, Any]:
    """``extra_keys["stage"]`` of an input: the stage's ``index``, its ``kind`` (``action`` or
    ``text_only``) and ``callable_tools`` (None: every tool offered), so an agent can decode
    for the stage (see ``magma_core.agents.chat_options``)."""
    return {"index": view.stage_index, "kind": "text_only" if view.text_only else "action",
            "callable_tools": None if view.callable_tools is None else list(view.callable_tools)}


def build_input(slot: int, view: AgentView, memory: dict[str, Any]) -> AgentInput:
    """The protocol input for one slot's current view (its stage in ``extra_keys["stage"]``)."""
    attributes = copy.deepcopy(view.attributes)
    attributes.setdefault("known_robots", list(view.robot_names))
    return AgentInput(
        id=slot,
        instruction={"type": view.kind, "content": instruction_content(view)},
        tools=view.tools,
        attributes=attributes,
        memory=memory,
        extra_keys={"stage": stage_key(view)},
    )


def decision_of(outputs: list[AgentOutput]) -> tuple[Any, dict | None]:
    """(Decision or DecisionError, new memory or None) from an input's outputs (the first
    candidate). Every string in them is made safe first: agent output is untrusted."""
    if not outputs:
        return DecisionError("missing_output", "the agent returned no output for this input"), None
    output = outputs[0]
    memory = safe_value(output.memory) if output.memory is not None else None
    if output.status == "completed" and output.output is not None:
        decision = AgentDecision.model_validate(safe_value(output.output.model_dump(mode="python")))
        return decision.to_decision(), memory
    error = output.error
    code = safe_text(error.code) if error else "agent_error"
    message = safe_text(error.message) if error else "the agent returned no decision"
    return DecisionError(code, message), memory


class RunLoop:
    """Runs ``episodes`` of ``task`` with ``agent`` on ``executor`` and saves them in ``store``.

    The episode indices come from ``episode_source`` when given (pulled one at a time, only
    when a slot is free: worker processes share the pending episodes that way), else from
    :meth:`pending`. Episode *k* uses seed ``seed + k`` either way.
    """

    def __init__(
        self,
        task: BaseTask,
        agent: Agent,
        executor: Engine,
        store: RunStore,
        run_name: str,
        *,
        episodes: int,
        seed: int,
        limits: LoopLimits | None = None,
        listener: Listener | None = None,
        episode_source: Iterable[int] | None = None,
        pacing: Pacing | None = None,
        observe_images: bool = False,
        control: Any = None,
    ) -> None:
        self.task = task
        self.agent = agent
        self.executor = executor
        self.store = store
        self.run_name = run_name
        self.episodes = episodes
        self.seed = seed
        self.limits = limits or LoopLimits()
        self.listener = listener or no_listener
        self._warned: set[str] = set()  # scenario warnings already reported by this loop
        self.episode_source = episode_source
        self.pacing = pacing or Pacing()
        self.observe_images = observe_images  # camera images in each input (observe_images)
        self.control = control  # --record-control: the engine's ControlRecorder (or None)
        self._joints: dict[str, list[str]] | None = None

    def pending(self) -> deque[int]:
        """The episodes of this run not yet in the store, in order."""
        return deque(self.store.pending_episodes(self.run_name, self.episodes))

    def run(self) -> list[EpisodeSummary]:
        """Run every pending episode; return the summaries of those finished in this call.

        Raises :class:`AgentOutage` when the agent is unreachable for every slot (see
        :class:`Pacing`) or the judge gives no verdict; episodes in flight are not stored."""
        source = iter(self.pending() if self.episode_source is None else self.episode_source)
        free = deque(range(self.executor.num_slots))
        active: dict[int, EpisodeState] = {}
        finished: list[EpisodeSummary] = []
        with SlotPipeline(self.agent, self.pacing, self.executor.num_slots) as pipeline:
            views: dict[int, AgentView] = {}
            started, more = self._fill(free, source, active, finished)
            self._ask(pipeline, started, active, views)
            ready: dict[int, SlotAnswer] = {}
            while active:
                for answer in pipeline.answers():
                    ready[answer.slot] = answer
                if self.pacing.lockstep and pipeline.waiting:
                    continue  # the old schedule: every slot answers before any executes
                outcomes = self._execute(ready, active, views)
                ready = {}
                again: list[int] = []
                for slot, outcome in sorted(outcomes.items()):
                    state = active[slot]
                    self.listener("step", state, outcome)
                    if self._should_end(state, outcome):
                        finished.append(self._finish(state))
                        del active[slot]
                        free.append(slot)
                    else:
                        again.append(slot)
                if more:
                    started, more = self._fill(free, source, active, finished)
                    again += started
                self._ask(pipeline, again, active, views)
        return finished

    def _fill(self, free: deque[int], source: Iterator[int], active: dict[int, EpisodeState],
              finished: list[EpisodeSummary]) -> tuple[list[int], bool]:
        """Start episodes from ``source`` in the free slots: (the slots started, whether
        ``source`` may have more). An episode over at its start (its world's reset or
        stage 0's entry transition failed: an ``error``) is stored at once, its slot reused."""
        started: list[int] = []
        while free:
            episode = next(source, None)
            if episode is None:
                return started, False
            slot = free.popleft()
            self._start(slot, episode, active)
            if self.executor.status(slot) != "running":
                finished.append(self._finish(active.pop(slot)))
                free.appendleft(slot)
                continue
            started.append(slot)
        return started, True

    def _ask(self, pipeline: SlotPipeline, slots: list[int], active: dict[int, EpisodeState],
             views: dict[int, AgentView]) -> None:
        """Send the next input of each of ``slots`` (together, in the lockstep schedule)."""
        items = []
        for slot in sorted(slots):
            views[slot] = self.executor.agent_view(slot)
            agent_input = build_input(slot, views[slot], active[slot].memory)
            if self.observe_images:
                state = active[slot]
                agent_input = attach_images(self.executor, slot, agent_input,
                                            state.decisions + 1, state.images)
            items.append((slot, agent_input))
        if self.pacing.lockstep:
            pipeline.ask_together(items)
        else:
            for item in items:
                pipeline.ask(*item)

    # -- one episode ---------------------------------------------------------------------
    def _start(self, slot: int, episode: int, active: dict[int, EpisodeState]) -> None:
        seed = self.seed + episode
        self.executor.reset_slot(slot, seed)
        state = EpisodeState(episode, seed, slot, initial_memory(self.task))
        active[slot] = state
        self._keep_control(state)  # steps of the start (an entry transition's), as decision 0
        self.listener("start", state, self.executor.agent_view(slot))
        self._report_warnings(state)

    def _report_warnings(self, state: EpisodeState) -> None:
        """Report each scenario warning of the slot's episode (e.g. a stage whose goals hold
        when it starts) once per loop, when the episode meets it first."""
        for warning in self.executor.record(state.slot).warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.listener("warning", None, f"{warning} (episode {state.episode}, seed {state.seed})")

    def _execute(self, ready: dict[int, SlotAnswer], active: dict[int, EpisodeState],
                 views: dict[int, AgentView]) -> dict[int, StepOutcome]:
        """Count each answered slot's decision and execute them together."""
        decisions: dict[int, Any] = {}
        for slot, answer in sorted(ready.items()):
            decision, memory = decision_of(answer.outputs)
            state = active[slot]
            if memory is not None:
                state.memory = memory
            state.decisions += 1
            usage = exchange_of(answer.outputs[0].internal_steps) if answer.outputs else {}
            carried = [{**exchange_of(o.internal_steps), "wait_s": 0.0} for o in answer.failed]
            entry = merge_exchanges(carried, {**usage, "wait_s": answer.waited_s})
            wait_s = entry.pop("wait_s")
            state.agent_steps.append({**entry, "latency_s": round(wait_s, 6),
                                      "decision": state.decisions})
            acted = isinstance(decision, Decision) and bool(decision.tool_calls)
            state.idle = self.limits.idle_after(state.idle, acted, views[slot].text_only)
            decisions[slot] = decision
            state.last_error = decision if isinstance(decision, DecisionError) else None
        outcomes = self.executor.submit(decisions)
        for slot in sorted(decisions):
            self._keep_control(active[slot])
        return outcomes

    def _keep_control(self, state: EpisodeState) -> None:
        """With ``--record-control``: the control steps the slot took since the last call,
        as the store row of its current decision (0 before the first)."""
        if self.control is None:
            return
        steps = self.control.take(state.slot)
        if steps:
            if self._joints is None:
                self._joints = self.control.joint_names()
            state.control.append(pack_control(state.decisions, self.control.rate, self._joints, steps))

    def _should_end(self, state: EpisodeState, outcome: StepOutcome) -> bool:
        status = self.executor.status(state.slot)
        self._report_warnings(state)
        if status == JUDGE_UNAVAILABLE:
            raise AgentOutage(self.executor.record(state.slot).reason)
        if status != "running":
            return True
        if state.last_error is not None and state.last_error.code == TRACE_EXHAUSTED:
            reason = f"the reference trace ran out before the task ended: {state.last_error.message}"
            end: tuple[str, str] | None = (TRACE_EXHAUSTED, reason)
        else:
            end = self.limits.end_of(state.idle, state.decisions)
        if end is not None:  # the reason also names the episode's failed calls
            steps = self.executor.record(state.slot).steps
            self.executor.end_episode(state.slot, end[0], with_failed_calls(end[1], steps))
        return end is not None

    def _finish(self, state: EpisodeState) -> EpisodeSummary:
        record = self.executor.record(state.slot)
        agent = state.agent_totals()
        document = record.to_dict()
        document["episode"] = state.episode
        document["agent_memory"] = state.memory
        document["agent"] = agent
        summary = episode_summary(state.episode, state.seed, record, agent)
        rows = episode_rows(record)
        if state.images:
            rows = replace(rows, images=tuple(state.images))
        if state.control:
            rows = replace(rows, control=tuple(state.control))
        self.store.save_episode(self.run_name, summary, document, rows)
        self.listener("end", state, summary)
        return summary
