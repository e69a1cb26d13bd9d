"""The driver side of a run on Ray: engine actors pull units of work, the driver stores results.

:func:`drive_units` starts one :class:`~magma_core.runs.ray_actors.UnitActor` per seat (one
CPU each), answers each actor's ``("next",)`` with the next pending unit, passes its events to
the listener (the same events, with the same notes, as worker processes send), and hands each
finished unit to ``on_result``, which writes the store: the driver is the only writer, so a
driver killed with ``kill -9`` resumes with the same command, exactly as without Ray.

An actor that dies (its process killed, its machine gone) loses only its units in flight:
they go back to the front of the queue, for a replacement actor (at most
``max_replacements`` in all) or any actor still pulling, each unit at most ``max_attempts``
times. An actor whose job fails (it raised: a user error, an agent outage) is reported in
one line and its units in flight are not retried, as with worker processes.
:func:`magma_core.runs.placement.place` calls it for ``magma run --ray``, ``magma bench run
--ray`` and ``magma gen --ray``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from magma_core.runs.events import Listener
from magma_core.runs.limits import MAX_ATTEMPTS
from magma_core.runs.ray_actors import Job, UnitActor
from magma_core.runs.ray_cluster import RayCluster, cluster_cpus, import_ray

WAIT_S = 1.0  # how long one take() waits for an actor's first message
MAX_REPLACEMENTS = 3  # actors started in place of dead ones, in all
ACTOR_CONCURRENCY = 4  # calls an actor serves at once (take, give, pid, start)

OnResult = Callable[[Any, Any], None]  # (unit, payload)


@dataclass
class _Seat:
    """The driver's view of one actor (a replacement takes the seat of a dead one)."""

    seat: int
    actor: Any
    take: Any = None  # the outstanding take() call
    in_flight: set[Hashable] = field(default_factory=set)
    closed: bool = False  # told that no unit is left
    ended: bool = False  # its job finished (done or error)


def split(total: int | None, parts: int) -> list[int | None]:
    """``total`` in-flight requests split over ``parts`` actors (None: each its default)."""
    if total is None:
        return [None] * parts
    return [total // parts + (1 if k < total % parts else 0) for k in range(parts)]


def drive_units(
    make_job: Callable[[int], Job],
    units: Sequence[Hashable],
    *,
    actors: int,
    listener: Listener,
    on_result: OnResult,
    unit_word: str = "episode",
    max_attempts: int = MAX_ATTEMPTS,
    max_replacements: int = MAX_REPLACEMENTS,
) -> list[str]:
    """Run ``units`` in ``actors`` actors (``make_job(seat)``: each one's job) on the connected
    cluster; return one line per failed actor or unit given up. See the module doc."""
    ray = import_ray()
    actor_class = ray.remote(UnitActor).options(num_cpus=1, max_concurrency=ACTOR_CONCURRENCY)
    pending: deque[Hashable] = deque(units)
    attempts: Counter[Hashable] = Counter()
    finished: set[Hashable] = set()
    failures: list[str] = []
    seats: list[_Seat] = []
    calls: dict[Any, _Seat] = {}

    def start(seat: int) -> None:
        handle = _Seat(seat, actor_class.remote(make_job(seat), seat))
        handle.actor.start.remote()
        _ask(handle, calls)
        seats.append(handle)

    replacements = 0
    try:
        for seat in range(actors):
            start(seat)
        while calls:
            ready, _ = ray.wait(list(calls), num_returns=1)
            handle = calls.pop(ready[0])
            try:
                messages = ray.get(ready[0])
            except ray.exceptions.RayError as exc:  # died, unreachable, unschedulable
                ray.kill(handle.actor)  # one that is only unreachable must not run on
                lost = _requeue(handle, pending, attempts, max_attempts, failures, unit_word)
                line = f"Ray actor {handle.seat} died ({_reason(exc)})"
                if lost:
                    listener("warning", None, f"{line}; {unit_word}s {lost} will run again")
                if pending and replacements < max_replacements:
                    replacements += 1
                    start(handle.seat)
                continue
            for message in messages:
                _handle(handle, message, pending, finished, listener, on_result, failures, unit_word)
            if not handle.ended:
                _ask(handle, calls)
    finally:
        for handle in seats:
            ray.kill(handle.actor)
    if pending:
        left = ", ".join(str(u) for u in pending)
        failures.append(f"no Ray actor was left to run {unit_word}s {left}")
    return failures


def _ask(handle: _Seat, calls: dict[Any, _Seat]) -> None:
    handle.take = handle.actor.take.remote(WAIT_S)
    calls[handle.take] = handle


def _handle(handle: _Seat, message: tuple, pending: deque[Hashable], finished: set[Hashable],
            listener: Listener, on_result: OnResult, failures: list[str], unit_word: str) -> None:
    """Act on one message from an actor (see :mod:`magma_core.runs.ray_actors`)."""
    kind = message[0]
    if kind == "next":
        unit = pending.popleft() if pending else None
        handle.actor.give.remote(unit)
        if unit is None:
            handle.closed = True
        else:
            handle.in_flight.add(unit)
    elif kind == "event":
        listener(*message[1:])
    elif kind == "result":
        unit, payload = message[1:]
        handle.in_flight.discard(unit)
        if unit not in finished:  # a unit is stored once, whatever happens
            finished.add(unit)
            on_result(unit, payload)
    elif kind == "done":
        handle.ended = True
    elif kind == "error":
        handle.ended = True
        lost = ", ".join(str(u) for u in sorted(handle.in_flight, key=str))
        failures.append(f"Ray actor {handle.seat} failed: {message[1]}"
                        + (f"; {unit_word}s not stored: {lost}" if lost else ""))


def _requeue(handle: _Seat, pending: deque[Hashable], attempts: Counter[Hashable],
             max_attempts: int, failures: list[str], unit_word: str) -> str:
    """Put a dead actor's units in flight back at the front of the queue (those not yet
    tried ``max_attempts`` times); return them as text."""
    handle.ended = True
    again = []
    for unit in sorted(handle.in_flight, key=str, reverse=True):
        attempts[unit] += 1
        if attempts[unit] >= max_attempts:
            failures.append(f"{unit_word} {unit} was lost with {attempts[unit]} Ray actors "
                            "that died; not stored")
        else:
            pending.appendleft(unit)
            again.append(unit)
    handle.in_flight = set()
    return ", ".join(str(u) for u in sorted(again, key=str))


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    for marker in ("The actor died", "The actor is dead", "Worker exit type"):
        if marker in text:
            return text[text.index(marker):][:160]
    return type(exc).__name__


def actor_count(cluster: RayCluster, units: int, concurrency: int | None,
                listener: Listener) -> int:
    """How many actors to start: ``cluster.actors`` (default: the cluster's CPUs), no more
    than the CPUs, the units, or the requests allowed in flight in total."""
    cpus = cluster_cpus()
    count = cluster.actors or cpus
    if count > cpus:
        listener("warning", None, f"the Ray cluster has {cpus} CPU(s): starting {cpus} actors, "
                 f"not {count}")
        count = cpus
    return max(1, min(count, units, concurrency or units))
