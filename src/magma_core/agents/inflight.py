"""Several agent requests in flight at once; answers delivered as they arrive.

:class:`InFlightRequests` wraps an :class:`~magma_core.agents.base.Agent`. Callers
:meth:`~InFlightRequests.send` one input under a key of their own (a slot, say) and
:meth:`~InFlightRequests.receive` the :class:`Arrival` of each answer whenever it comes,
in whatever order. At most ``concurrency`` requests are in flight (1 for an agent that is not
``concurrent``); inputs beyond that wait their turn. Each input goes in a request of its own,
unless ``batch_window`` > 0: then the inputs sent within that many seconds of the first one
travel together (at most ``max_batch``), so a batching server (vLLM) still gets batches.
:meth:`~InFlightRequests.send_together` sends several inputs as one request (the lockstep
schedule).

A request's answer is :meth:`Agent.answer`'s: per input its outputs, or ``NoAnswer`` when the
agent could not be reached (the caller decides whether and when to send it again). An agent
that raises gives ``agent_exception`` error outputs: nothing here ends the caller's run.

A request's id is a digest of its inputs (:func:`request_id`), not a random or counted one, so
the records that carry it (each internal step's id) are the same whatever the order in which
requests went out; the same inputs sent again (a retry) carry the same id.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from collections import deque
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from magma_core.agents.base import Agent, Answer, error_output
from magma_core.protocol.agent import AgentInput, AgentRequest

_CLOSE = None  # the dispatcher's stop sentinel


def request_id(inputs: Sequence[AgentInput]) -> str:
    """The id of a request holding ``inputs``: a digest of them (32 hex characters)."""
    body = json.dumps([i.model_dump(mode="json") for i in inputs], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:32]


@dataclass
class Arrival:
    """The answer to one input sent under ``key``; ``latency_s``: from the request going out
    to its answer; ``queued_s``: how long the input waited for a free request."""

    key: Hashable
    answer: Answer
    latency_s: float
    queued_s: float


@dataclass
class _Item:
    key: Hashable
    agent_input: AgentInput
    sent: float


class InFlightRequests:
    """Requests to ``agent`` in flight at once (see the module doc). Use as a context manager
    or call :meth:`close`; it does not close the agent."""

    def __init__(self, agent: Agent, *, concurrency: int = 8, batch_window: float = 0.0,
                 max_batch: int = 64) -> None:
        if concurrency < 1 or max_batch < 1 or batch_window < 0:
            raise ValueError("concurrency and max_batch must be >= 1, batch_window >= 0")
        self.agent = agent
        self.concurrency = concurrency if agent.concurrent else 1
        self.batch_window = batch_window
        self.max_batch = max_batch
        self._todo: queue.Queue[list[_Item] | None] = queue.Queue()
        self._held: deque[list[_Item]] = deque()  # taken from _todo but not yet sent
        self._arrivals: queue.Queue[Arrival] = queue.Queue()
        self._permits = threading.Semaphore(self.concurrency)
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="magma-agent")
        self._outstanding = 0
        self._lock = threading.Lock()
        self._closed = False
        self._dispatcher = threading.Thread(target=self._dispatch, name="magma-agent-dispatch",
                                            daemon=True)
        self._dispatcher.start()

    # -- the caller's side -----------------------------------------------------------------
    def send(self, key: Hashable, agent_input: AgentInput) -> None:
        """Ask for ``agent_input``; its :class:`Arrival` will carry ``key``."""
        self.send_together([(key, agent_input)])

    def send_together(self, items: Sequence[tuple[Hashable, AgentInput]]) -> None:
        """Ask for several inputs in one request (ids must differ)."""
        if not items:
            return
        if self._closed:
            raise RuntimeError("InFlightRequests is closed")
        now = time.perf_counter()
        with self._lock:
            self._outstanding += len(items)
        self._todo.put([_Item(key, agent_input, now) for key, agent_input in items])

    @property
    def outstanding(self) -> int:
        """Inputs sent and not yet received."""
        return self._outstanding

    def receive(self, timeout: float | None = None) -> list[Arrival]:
        """Wait up to ``timeout`` seconds (None: until one arrives) for an answer; return it and
        every other answer already there (an empty list on timeout)."""
        try:
            first = self._arrivals.get(timeout=timeout) if timeout is None or timeout > 0 \
                else self._arrivals.get_nowait()
        except queue.Empty:
            return []
        arrivals = [first]
        while True:
            try:
                arrivals.append(self._arrivals.get_nowait())
            except queue.Empty:
                break
        with self._lock:
            self._outstanding -= len(arrivals)
        return arrivals

    def close(self) -> None:
        """Stop sending; wait for the requests in flight to end."""
        if self._closed:
            return
        self._closed = True
        self._todo.put(_CLOSE)
        self._dispatcher.join()
        self._pool.shutdown(wait=True)

    def __enter__(self) -> InFlightRequests:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the dispatcher thread -------------------------------------------------------------
    def _take(self, timeout: float | None) -> list[_Item] | None:
        if self._held:
            return self._held.popleft()
        return self._todo.get(timeout=timeout)

    def _dispatch(self) -> None:
        while True:
            group = self._take(None)
            if group is _CLOSE:
                return
            self._permits.acquire()
            batch = list(group)
            stop = self._gather(batch) if self.batch_window > 0 else False
            self._pool.submit(self._exchange, batch)
            if stop:
                return

    def _gather(self, batch: list[_Item]) -> bool:
        """Add inputs sent within the batch window to ``batch``; True when closing."""
        deadline = time.perf_counter() + self.batch_window
        ids = {item.agent_input.id for item in batch}
        while len(batch) < self.max_batch:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return False
            try:
                group = self._take(remaining)
            except queue.Empty:
                return False
            if group is _CLOSE:
                return True
            if {item.agent_input.id for item in group} & ids or len(batch) + len(group) > self.max_batch:
                self._held.appendleft(group)  # next request
                return False
            batch.extend(group)
            ids.update(item.agent_input.id for item in group)
        return False

    def _exchange(self, batch: list[_Item]) -> None:
        inputs = [i.agent_input for i in batch]
        request = AgentRequest(request_id=request_id(inputs), inputs=inputs)
        started = time.perf_counter()
        try:
            answers = self.agent.answer(request)
        except Exception as exc:  # an agent bug: an error output per input, never a crash
            message = f"{type(exc).__name__}: {exc}"
            answers = {i.agent_input.id: [error_output(request.request_id, i.agent_input, k,
                                                       "agent_exception", message)
                                          for k in range(i.agent_input.num_outputs)]
                       for i in batch}
        finally:
            self._permits.release()
        ended = time.perf_counter()
        for item in batch:
            answer = answers.get(item.agent_input.id, [])
            self._arrivals.put(Arrival(item.key, answer, ended - started, started - item.sent))
