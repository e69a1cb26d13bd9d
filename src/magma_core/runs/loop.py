"""The run loop: episodes through the one engine, K at a time in its slots, with an agent.

For each step it builds one protocol-2.0 request holding an input per active slot (the engine's
view of that slot and the slot's agent memory), hands each candidate's decision to
``Executor.submit`` and carries the returned memory to the next step. Finished episodes are
written to the run store one transaction each.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from magma_core.agents.base import Agent, usage_of
from magma_core.protocol.agent import AgentInput, AgentRequest, AgentResponse
from magma_core.runs.agent_steps import exchanges_by_slot, merge_exchanges, share_wait
from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.simulation.executor.records import JUDGE_UNAVAILABLE, AgentView, StepOutcome
from magma_core.simulation.tasks import BaseTask

if TYPE_CHECKING:
    from magma_core.simulation.executor import Executor
from magma_core.store import EpisodeSummary, RunStore, episode_rows, episode_summary

NO_ACTION = "no_action"
DECISION_CAP = "decision_cap"
#: Error codes that say the agent could not be reached, not what it decided. Such a step is
#: not submitted to the engine: the input is sent again at the next step.
OUTAGE_CODES = frozenset(
    {"timeout", "transport_error", "agent_unavailable", "http_error", "client_error", "agent_failure"}
)


class AgentOutage(RuntimeError):
    """The agent could not be reached for ``max_agent_failures`` steps in a row, or the judge
    gave no verdict. Episodes in flight are not stored, so running the same command again
    resumes them."""


@dataclass
class LoopLimits:
    """When the loop itself ends an episode."""

    max_idle_decisions: int = 3  # consecutive decisions without a tool call on action stages
    max_decisions: int = 60  # decisions in one episode
    max_agent_failures: int = 3  # consecutive steps where the agent could not be reached


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
    carried: list[dict[str, Any]] = field(default_factory=list)  # exchanges of resent inputs

    def agent_totals(self) -> dict[str, Any]:
        """Tokens, model calls and agent latency summed over the episode's decisions."""
        keys = ("prompt_tokens", "completion_tokens", "total_tokens", "calls", "latency_s")
        totals: dict[str, Any] = {k: sum(step.get(k, 0) for step in self.agent_steps) for k in keys}
        totals["latency_s"] = round(float(totals["latency_s"]), 6)
        return {**totals, "per_decision": self.agent_steps}


Listener = Callable[[str, EpisodeState, Any], None]  # (event, episode, payload)


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


def build_input(slot: int, view: AgentView, memory: dict[str, Any]) -> AgentInput:
    """The protocol input for one slot's current view."""
    attributes = copy.deepcopy(view.attributes)
    attributes.setdefault("known_robots", list(view.robot_names))
    return AgentInput(
        id=slot,
        instruction={"type": view.kind, "content": instruction_content(view)},
        tools=view.tools,
        attributes=attributes,
        memory=memory,
    )


def decisions_from(response: AgentResponse, expected: set[int]) -> dict[int, tuple[Any, dict | None]]:
    """slot -> (Decision or DecisionError, new memory or None), for every expected slot."""
    out: dict[int, tuple[Any, dict | None]] = {}
    for output in response.root:
        slot = output.source_id
        if slot not in expected or slot in out:
            continue
        if output.status == "completed" and output.output is not None:
            out[slot] = (output.output.to_decision(), output.memory)
        else:
            error = output.error
            code = error.code if error else "agent_error"
            message = error.message if error else "the agent returned no decision"
            out[slot] = (DecisionError(code, message), output.memory)
    for slot in expected - set(out):
        out[slot] = (DecisionError("missing_output", "the agent returned no output for this input"), None)
    return out


def usage_by_slot(response: AgentResponse) -> dict[int, dict[str, Any]]:
    """Token counts the agent reported per input (first candidate), from its internal steps."""
    out: dict[int, dict[str, Any]] = {}
    for output in response.root:
        if output.source_id not in out:
            totals = usage_of(output)
            out[output.source_id] = {k: totals[k] for k in
                                     ("prompt_tokens", "completion_tokens", "total_tokens", "calls")}
    return out


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
        executor: Executor,
        store: RunStore,
        run_name: str,
        *,
        episodes: int,
        seed: int,
        limits: LoopLimits | None = None,
        listener: Listener | None = None,
        episode_source: Iterable[int] | None = None,
    ) -> None:
        self.task = task
        self.agent = agent
        self.executor = executor
        self.store = store
        self.run_name = run_name
        self.episodes = episodes
        self.seed = seed
        self.limits = limits or LoopLimits()
        self.listener = listener or (lambda event, episode, payload: None)
        self.episode_source = episode_source
        self._outages = 0

    def pending(self) -> deque[int]:
        """The episodes of this run not yet in the store, in order."""
        return deque(self.store.pending_episodes(self.run_name, self.episodes))

    def run(self) -> list[EpisodeSummary]:
        """Run every pending episode; return the summaries of those finished in this call."""
        source = iter(self.pending() if self.episode_source is None else self.episode_source)
        free = deque(range(self.executor.num_slots))
        active: dict[int, EpisodeState] = {}
        finished: list[EpisodeSummary] = []
        more = True
        while True:
            more = more and self._fill(free, source, active)
            if not active:
                return finished
            outcomes = self._step(active)
            for slot, outcome in outcomes.items():
                state = active[slot]
                self.listener("step", state, outcome)
                if self._should_end(state, outcome):
                    finished.append(self._finish(state))
                    del active[slot]
                    free.append(slot)

    def _fill(self, free: deque[int], source: Iterator[int], active: dict[int, EpisodeState]) -> bool:
        """Start episodes from ``source`` in the free slots; False once ``source`` is empty."""
        while free:
            episode = next(source, None)
            if episode is None:
                return False
            self._start(free.popleft(), episode, active)
        return True

    # -- one episode ---------------------------------------------------------------------
    def _start(self, slot: int, episode: int, active: dict[int, EpisodeState]) -> None:
        seed = self.seed + episode
        self.executor.reset_slot(slot, seed)
        state = EpisodeState(episode, seed, slot, initial_memory(self.task))
        active[slot] = state
        self.listener("start", state, self.executor.agent_view(slot))

    def _step(self, active: dict[int, EpisodeState]) -> dict[int, StepOutcome]:
        views = {slot: self.executor.agent_view(slot) for slot in active}
        request = AgentRequest(
            request_id=uuid.uuid4().hex,
            inputs=[build_input(slot, views[slot], active[slot].memory) for slot in sorted(active)],
        )
        asked = time.perf_counter()
        usage: dict[int, dict[str, Any]] = {}
        try:
            response = self.agent.respond(request)
            answers = decisions_from(response, set(active))
            usage = exchanges_by_slot(response)
        except Exception as exc:  # a broken agent must not end the run
            error = DecisionError("agent_failure", f"{type(exc).__name__}: {exc}")
            answers = {slot: (error, None) for slot in active}
        waited = time.perf_counter() - asked
        shares = share_wait(waited, {s: usage.get(s, {}).get("model_s", 0.0) for s in active}, sorted(active))
        unreachable = {
            slot for slot, (decision, _) in answers.items()
            if isinstance(decision, DecisionError) and decision.code in OUTAGE_CODES
        }
        if unreachable:
            self._outages += 1
            if self._outages >= self.limits.max_agent_failures:
                decision = answers[min(unreachable)][0]
                raise AgentOutage(
                    f"the agent could not be reached {self._outages} times in a row "
                    f"({decision.code}: {decision.message})"
                )
        else:
            self._outages = 0
        decisions: dict[int, Any] = {}
        for slot, (decision, memory) in answers.items():
            state = active[slot]
            if slot in unreachable:  # asked again at the next step, where its figures count
                state.carried.append({**usage.get(slot, {}), "wait_s": shares[slot]})
                continue
            if memory is not None:
                state.memory = memory
            state.decisions += 1
            entry = merge_exchanges(state.carried, {**usage.get(slot, {}), "wait_s": shares[slot]})
            state.carried = []
            wait_s = entry.pop("wait_s")
            state.agent_steps.append({**entry, "latency_s": round(wait_s, 6), "decision": state.decisions})
            acted = isinstance(decision, Decision) and bool(decision.tool_calls)
            state.idle = 0 if acted or views[slot].text_only else state.idle + 1
            decisions[slot] = decision
        return self.executor.submit(decisions)

    def _should_end(self, state: EpisodeState, outcome: StepOutcome) -> bool:
        status = self.executor.status(state.slot)
        if status == JUDGE_UNAVAILABLE:
            raise AgentOutage(self.executor.record(state.slot).reason)
        if status != "running":
            return True
        if state.idle >= self.limits.max_idle_decisions:
            reason = f"{state.idle} consecutive decisions without a tool call on an action stage"
            self.executor.end_episode(state.slot, NO_ACTION, reason)
            return True
        if state.decisions >= self.limits.max_decisions:
            reason = f"reached the cap of {self.limits.max_decisions} decisions"
            self.executor.end_episode(state.slot, DECISION_CAP, reason)
            return True
        return False

    def _finish(self, state: EpisodeState) -> EpisodeSummary:
        record = self.executor.record(state.slot)
        agent = state.agent_totals()
        document = record.to_dict()
        document["episode"] = state.episode
        document["agent_memory"] = state.memory
        document["agent"] = agent
        summary = episode_summary(state.episode, state.seed, record, agent)
        self.store.save_episode(self.run_name, summary, document, episode_rows(record))
        self.listener("end", state, summary)
        return summary
