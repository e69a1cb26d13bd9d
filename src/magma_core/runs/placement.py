"""The one placement seam: units of work run in this process, in worker processes or on Ray.

:func:`place` is how ``magma run`` (episodes), ``magma bench run`` (a group's trials) and
``magma gen`` (trees) scale: each describes its work as a :class:`Work` (what to run here,
what each worker process runs, what each Ray actor runs and how the driver stores what an
actor sends back), and :func:`place` picks where, from ``workers`` and ``ray``, the same way
for all three.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from magma_core.runs.events import Listener
from magma_core.runs.ray_actors import Job
from magma_core.runs.ray_cluster import RayCluster, connect
from magma_core.runs.ray_driver import actor_count, drive_units, split
from magma_core.runs.workers import run_in_workers


@dataclass(frozen=True)
class Seat:
    """One Ray actor's place in a placement: its ``seat``, how many ``actors`` there are,
    how many ``units`` in all, and its share of the requests in flight (None: its default)."""

    seat: int
    actors: int
    units: int
    concurrency: int | None


class Work(Protocol):
    """Units of work as :func:`place` runs them."""

    unit_word: str  # "episode", "trial", "tree": for failure lines

    @property
    def concurrency(self) -> int | None:
        """Agent requests in flight at most in all (split across Ray actors)."""

    def here(self, units: Sequence[Hashable], listener: Listener) -> list[str]:
        """Run ``units`` in this process; failure lines."""

    def worker_job(self, workers: int, units: Sequence[Hashable]) -> tuple[Any, Callable[..., None]]:
        """(the picklable job, the worker's main function) for ``workers`` processes."""

    def actor_job(self, seat: Seat) -> Job:
        """The picklable job of one Ray actor."""

    def on_result(self, unit: Any, payload: Any) -> None:
        """Store what an actor sent back for ``unit`` (the driver is the only writer)."""


def place(work: Work, units: Sequence[Hashable], *, listener: Listener, workers: int = 1,
          ray: RayCluster | None = None) -> list[str]:
    """Run ``units`` of ``work``: on ``ray``'s cluster when given (actors as
    :func:`~magma_core.runs.ray_driver.actor_count` says, requests in flight split across
    them), else in ``min(workers, len(units))`` worker processes, else here. Returns one line
    per failure (a failed worker or actor, an agent outage, a unit given up)."""
    units = list(units)
    if not units:
        return []
    if ray is not None:
        connect(ray)
        actors = actor_count(ray, len(units), work.concurrency, listener)
        shares = split(work.concurrency, actors)
        return drive_units(lambda seat: work.actor_job(Seat(seat, actors, len(units), shares[seat])),
                           units, actors=actors, listener=listener, on_result=work.on_result,
                           unit_word=work.unit_word)
    count = min(workers, len(units))
    if count <= 1:
        return work.here(units, listener)
    job, target = work.worker_job(count, units)
    return run_in_workers(job, units, count, listener, target=target)  # type: ignore[arg-type]
