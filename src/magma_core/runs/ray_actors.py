"""What runs inside a Ray actor: one engine, fed units of work by the driver.

:class:`UnitActor` is a plain class (``ray.remote`` wraps it in
:mod:`~magma_core.runs.ray_driver`, so this module never imports Ray). Its job, a picklable
object of plain values such as :class:`RunJob`, runs in a thread of the actor and talks to
the driver through a :class:`Channel` in the worker processes' protocol
(:mod:`magma_core.runs.workers`): it sends ``("next",)`` when one of its slots is free and
receives a unit (an episode index, a benchmark trial, a generation tree) or None when none
is left; it sends ``("event", name, note, payload)`` for the live display,
``("result", unit, payload)`` for each finished unit (the driver alone writes the store),
then ``("done",)`` or ``("error", line)``; its first message is the event ``"actor"``
(an :class:`ActorNote`: where it runs). The driver collects the messages with
:meth:`UnitActor.take`.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from magma_core.runs.assembly import prepare, run_episodes
from magma_core.runs.spec import RunSpec
from magma_core.runs.workers import (
    _one_line,
    episodes_from_parent,
    event_sender,
    one_intra_op_thread,
)
from magma_core.store import EpisodeRows, EpisodeSummary
from magma_core.user_error import UserError


class Channel:
    """The actor's side of its link to the driver: ``send`` a message, ``recv`` a unit (the
    methods a worker's pipe end has, so the worker helpers work on it unchanged)."""

    def __init__(self) -> None:
        self.outbox: queue.Queue[tuple] = queue.Queue()
        self.units: queue.Queue[Any] = queue.Queue()

    def send(self, message: tuple) -> None:
        self.outbox.put(message)

    def recv(self) -> Any:
        return self.units.get()


@dataclass(frozen=True)
class ActorNote:
    """The payload of the ``"actor"`` event an actor sends as its job starts."""

    seat: int
    pid: int
    host: str


class Job(Protocol):
    """A unit-of-work job: ``run`` pulls units from ``units`` and reports on ``channel``."""

    def run(self, index: int, units: Iterator[Any], channel: Channel) -> None: ...


class UnitActor:
    """The body of one Ray actor: ``start`` runs ``job`` in a thread; ``give`` hands it a unit
    (or None: no more); ``take`` returns the messages it sent since the last call."""

    def __init__(self, job: Job, index: int) -> None:
        self.job = job
        self.index = index
        self.channel = Channel()
        self.thread: threading.Thread | None = None

    def pid(self) -> int:
        """This actor's process id."""
        return os.getpid()

    def start(self) -> None:
        """Run the job in a thread of this actor (once)."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._main, name=f"magma-actor-{self.index}",
                                           daemon=True)
            self.thread.start()

    def give(self, unit: Any) -> None:
        """The answer to the job's ``("next",)``: a unit, or None when none is left."""
        self.channel.units.put(unit)

    def take(self, wait_s: float) -> list[tuple]:
        """The messages sent since the last call, waiting up to ``wait_s`` for the first."""
        try:
            messages = [self.channel.outbox.get(timeout=wait_s)]
        except queue.Empty:
            return []
        while True:
            try:
                messages.append(self.channel.outbox.get_nowait())
            except queue.Empty:
                return messages

    def _main(self) -> None:
        one_intra_op_thread()
        self.channel.send(("event", "actor", None, ActorNote(self.index, os.getpid(),
                                                             socket.gethostname())))
        try:
            self.job.run(self.index, units_from_driver(self.channel), self.channel)
            self.channel.send(("done",))
        except UserError as exc:
            self.channel.send(("error", str(exc)))
        except BaseException as exc:  # anything else still reaches the driver as one line
            self.channel.send(("error", _one_line(exc)))


def units_from_driver(channel: Channel) -> Iterator[Any]:
    """Units handed out by the driver, one per request, until it has none left."""
    return episodes_from_parent(channel)  # type: ignore[arg-type]


class EpisodeSink:
    """Stands where a ``RunLoop`` expects its store: each finished episode goes to the driver
    as ``("result", episode, (summary, record, rows))`` instead of into SQLite."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def save_episode(self, run_name: str, summary: EpisodeSummary, record: dict[str, Any],
                     rows: EpisodeRows | None = None) -> None:
        self.channel.send(("result", summary.episode, (summary, record, rows)))


@dataclass(frozen=True)
class EpisodeJob:
    """A job whose units are episodes of one run-store run: ``run_episodes(store, units,
    listener)`` runs them in one engine of ``slots`` slots (a picklable callable, e.g. a
    ``functools.partial`` of a module function), storing each in the :class:`EpisodeSink`
    that stands for the store, so that finished episodes go to the driver."""

    run_episodes: Callable[[Any, Iterator[int], Any], Any]
    slots: int

    def run(self, index: int, units: Iterator[Any], channel: Channel) -> None:
        self.run_episodes(EpisodeSink(channel), units,
                          event_sender(channel, index * self.slots))  # type: ignore[arg-type]


def spec_episodes(spec: RunSpec, slots: int, store: Any, units: Iterator[int],
                  listener: Any) -> None:
    """``magma run``'s episodes in an actor: the task, agent and judge built by
    :func:`~magma_core.runs.assembly.prepare`, the engine by
    :func:`~magma_core.runs.assembly.run_episodes`, as in a worker process."""
    parts = prepare(spec)
    try:
        run_episodes(spec, parts, store, slots=slots, listener=listener, episode_source=units)
    finally:
        parts.close()
