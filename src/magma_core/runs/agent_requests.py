"""The in-flight slot pipeline: each slot's agent requests go out on their own, answers come
back as they arrive, and one slot's trouble stays its own.

Drivers (``magma run``'s loop, and the benchmark and generation drivers) use it so::

    with SlotPipeline(agent, Pacing(concurrency=8)) as pipeline:
        pipeline.ask(slot, agent_input)          # submit work for a slot
        for answer in pipeline.answers():        # the answers that arrived (waits for one)
            ...                                  # decide, execute, ask the slot's next input

An input whose answer did not arrive (transport error, timeout, HTTP 429/5xx: ``NoAnswer``)
is sent again for that slot alone after a backoff (``retry_backoff_s``, doubling up to
``max_backoff_s``); every other slot goes on. An error output the agent sent is an answer
like any other (the slot's decision error). :meth:`SlotPipeline.answers` raises
:class:`AgentOutage` only when every slot waiting for an answer has been unreachable for
``max_outage_s`` seconds.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from magma_core.agents.base import Agent, NoAnswer
from magma_core.agents.inflight import InFlightRequests
from magma_core.protocol.agent import AgentInput, AgentOutput
from magma_core.text_safety import safe_text
from magma_core.user_error import UserError

POLL_S = 1.0  # longest single wait, so outages are noticed on time


class AgentOutage(RuntimeError):
    """The agent could not be reached for any slot for ``max_outage_s`` seconds, or the judge
    gave no verdict. Episodes in flight are not stored, so running the same command again
    resumes them."""


@dataclass(frozen=True)
class Pacing:
    """How requests to the agent are paced.

    ``concurrency``: requests in flight at most (None: one per slot). ``batch_window``:
    seconds during which inputs are gathered into one request (0: one input per request).
    ``lockstep``: the old schedule, for comparison: one request for every slot, and no slot
    executes before all have answered. Retries and outages: see the module doc.
    """

    concurrency: int | None = None
    batch_window: float = 0.0
    lockstep: bool = False
    retry_backoff_s: float = 0.5
    max_backoff_s: float = 10.0
    max_outage_s: float = 60.0

    def __post_init__(self) -> None:
        if self.concurrency is not None and self.concurrency < 1:
            raise UserError(f"concurrency must be >= 1, got {self.concurrency}")
        for name in ("batch_window", "retry_backoff_s", "max_backoff_s", "max_outage_s"):
            if getattr(self, name) < 0:
                raise UserError(f"{name} must be >= 0, got {getattr(self, name)}")


@dataclass
class SlotAnswer:
    """A slot's answer: the agent's outputs for its input; ``latency_s`` of the request that
    answered, ``waited_s`` since the input was first asked (retries included)."""

    slot: Hashable
    outputs: list[AgentOutput]
    latency_s: float
    waited_s: float
    attempts: int
    failed: list[AgentOutput] = field(default_factory=list)  # outputs of unanswered attempts


@dataclass
class _Waiting:
    agent_input: AgentInput
    asked: float
    attempts: int = 1
    failing_since: float | None = None
    last_failure: str = ""
    failed: list[AgentOutput] = field(default_factory=list)


@dataclass
class SlotPipeline:
    """Agent requests of many slots in flight at once (see the module doc); ``slots`` sizes
    the default concurrency."""

    agent: Agent
    pacing: Pacing = field(default_factory=Pacing)
    slots: int = 8

    def __post_init__(self) -> None:
        self._requests = InFlightRequests(
            self.agent, concurrency=self.pacing.concurrency or max(1, self.slots),
            batch_window=self.pacing.batch_window,
        )
        self._waiting: dict[Hashable, _Waiting] = {}
        self._retries: list[tuple[float, int, Hashable]] = []  # (due, tie, slot)
        self._tie = 0

    def ask(self, slot: Hashable, agent_input: AgentInput) -> None:
        """Send ``agent_input`` for ``slot`` (which must not be waiting already)."""
        self.ask_together([(slot, agent_input)])

    def ask_together(self, items: Sequence[tuple[Hashable, AgentInput]]) -> None:
        """Send several slots' inputs in one request (the lockstep schedule)."""
        now = time.perf_counter()
        for slot, agent_input in items:
            if slot in self._waiting:
                raise ValueError(f"slot {slot!r} is already waiting for an answer")
            self._waiting[slot] = _Waiting(agent_input, now)
        self._requests.send_together(list(items))

    @property
    def waiting(self) -> set[Hashable]:
        """The slots waiting for an answer (retries included)."""
        return set(self._waiting)

    def answers(self, timeout: float | None = None) -> list[SlotAnswer]:
        """Wait for answers; return every one that arrived (at least one). Retries inputs that
        got no answer; raises :class:`AgentOutage` (see the module doc). Returns [] at once
        when no slot is waiting, and after ``timeout`` seconds (0: only what is there now)
        when none arrived."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        while self._waiting:
            now = time.perf_counter()
            self._send_due_retries(now)
            self._check_outage(now)
            wait = self._wait_s(now) if deadline is None else max(0.0, min(self._wait_s(now), deadline - now))
            arrivals = self._requests.receive(wait)
            done: list[SlotAnswer] = []
            for arrival in arrivals:
                state = self._waiting.get(arrival.key)
                if state is None:
                    continue
                if isinstance(arrival.answer, NoAnswer):
                    state.failed.extend(arrival.answer.outputs[:1])
                    self._schedule_retry(arrival.key, state, arrival.answer)
                    continue
                del self._waiting[arrival.key]
                done.append(SlotAnswer(arrival.key, arrival.answer, arrival.latency_s,
                                       time.perf_counter() - state.asked, state.attempts,
                                       state.failed))
            if done:
                return done
            if deadline is not None and time.perf_counter() >= deadline:
                return []
        return []

    def close(self) -> None:
        """Stop; waits for the requests in flight to end (each bounded by the agent's timeout)."""
        self._requests.close()

    def __enter__(self) -> SlotPipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- retries and outages -----------------------------------------------------------------
    def _schedule_retry(self, slot: Hashable, state: _Waiting, answer: NoAnswer) -> None:
        now = time.perf_counter()
        if state.failing_since is None:
            state.failing_since = now
        state.last_failure = safe_text(f"{answer.code}: {answer.message}")
        failures = state.attempts  # consecutive failures so far
        delay = min(self.pacing.max_backoff_s, self.pacing.retry_backoff_s * 2 ** (failures - 1))
        self._tie += 1
        heapq.heappush(self._retries, (now + delay, self._tie, slot))

    def _send_due_retries(self, now: float) -> None:
        while self._retries and self._retries[0][0] <= now:
            _, _, slot = heapq.heappop(self._retries)
            state = self._waiting.get(slot)
            if state is not None:
                state.attempts += 1
                self._requests.send(slot, state.agent_input)

    def _wait_s(self, now: float) -> float:
        wait = POLL_S
        if self._retries:
            wait = min(wait, max(0.0, self._retries[0][0] - now))
        return max(wait, 0.001)

    def _check_outage(self, now: float) -> None:
        states = list(self._waiting.values())
        if not states or any(s.failing_since is None for s in states):
            return
        since = max(s.failing_since for s in states if s.failing_since is not None)
        if now - since >= self.pacing.max_outage_s:
            raise AgentOutage(
                f"the agent could not be reached for any of {len(states)} slot(s) for "
                f"{now - since:.0f} s ({states[0].last_failure})"
            )
