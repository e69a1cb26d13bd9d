"""Worker processes for ``magma run --workers W``: one engine per process, one run store.

The parent starts W processes and keeps the pending episode indices. Where the platform
allows it (Linux) they are forked from the parent, which has already imported the engine,
ManiSkill and torch while checking the run, so no worker pays those imports again; elsewhere
they are spawned. Each worker creates its own simulator and keeps torch to one intra-op
thread, so W workers on W cores do not oversubscribe them.
Each worker builds its own task, agent, judge and ``Executor`` from the run's ``RunSpec``
(plain values; nothing built is pickled) through the same
:func:`~magma_core.runs.assembly.run_episodes` a single-process run uses, whose ``RunLoop`` asks the parent for the next episode whenever one of its slots is free, so a fast worker
takes more. Workers write finished episodes to the shared SQLite run store themselves.

Each worker talks to the parent over its own duplex pipe (not a shared queue: a worker killed
in the middle of a write cannot block the others). Worker to parent: ``("next",)``,
``("event", name, episode, payload)`` for the live display, ``("done",)`` or
``("error", line)``. Parent to worker: an episode index, or ``None`` when none is left.

The parent waits on the pipes and the process sentinels together, so a worker that raises or
dies is noticed at once; the others go on. A worker whose parent is gone stops at its next
message (the pipe is broken), and the parent terminates its workers when it is interrupted.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from magma_core.runs.assembly import freeze_loaded_objects, prepare, run_episodes
from magma_core.runs.events import Listener
from magma_core.runs.spec import RunSpec
from magma_core.store import RunStore
from magma_core.user_error import UserError

PARENT_GONE = (BrokenPipeError, ConnectionResetError, EOFError)
STOP_GRACE_S = 5.0  # how long a terminated worker may take before it is killed



@dataclass(frozen=True)
class WorkerJob:
    """What every worker needs, as plain values: the run's spec, never built objects."""

    spec: RunSpec
    slots: int  # slots of each worker's engine
    store_path: Path


# -- what the display reads, sent from worker to parent ------------------------------------
@dataclass(frozen=True)
class EpisodeNote:
    """The fields of a worker's ``EpisodeState`` the live display reads."""

    episode: int
    slot: int  # numbered across workers: worker i's slots are i*K .. i*K+K-1
    decisions: int


@dataclass(frozen=True)
class ViewNote:
    """The fields of an ``AgentView`` the live display reads."""

    stage_index: int
    num_stages: int
    episode_over: bool


@dataclass(frozen=True)
class OutcomeNote:
    """The fields of a ``StepOutcome`` the live display reads."""

    status: str
    next_view: ViewNote


def _view_note(view: Any) -> ViewNote:
    return ViewNote(view.stage_index, view.num_stages, view.episode_over)


def _payload_note(event: str, payload: Any) -> Any:
    """A small picklable stand-in for a listener payload (the summary is one already)."""
    if event == "start":
        return _view_note(payload)
    if event == "step":
        return OutcomeNote(str(payload.status), _view_note(payload.next_view))
    return payload


# -- the worker side -----------------------------------------------------------------------
def episodes_from_parent(conn: Connection) -> Iterator[int]:
    """Episode indices handed out by the parent, one per request, until it has none left."""
    while True:
        conn.send(("next",))
        episode = conn.recv()
        if episode is None:
            return
        yield episode


def event_sender(conn: Connection, first_slot: int) -> Listener:
    """A ``RunLoop`` listener that forwards each event to the parent. A ``notice`` (a line
    from the agent, sent from its threads, with no episode) goes one send at a time."""
    lock = threading.Lock()

    def send(event: str, state: Any, payload: Any) -> None:
        if event == "notice":
            with lock:
                conn.send(("event", event, None, str(payload)))
            return
        note = EpisodeNote(state.episode, first_slot + state.slot, state.decisions)
        with lock:
            conn.send(("event", event, note, _payload_note(event, payload)))

    return send


def worker_main(job: WorkerJob, index: int, conn: Connection,
                run: Callable[[Any, int, Connection], None] | None = None) -> None:
    """A worker process: run episodes handed out by the parent until none are left
    (``run(job, index, conn)``, default: a ``magma run`` job's episodes).

    Ctrl-C reaches the whole process group; workers ignore it and leave stopping to the
    parent. Any failure goes to the parent as one line, and the exit status is 1.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    one_intra_op_thread()
    try:
        (run or _run_episodes)(job, index, conn)
        conn.send(("done",))
    except PARENT_GONE:
        sys.exit(1)
    except UserError as exc:
        _report(conn, str(exc))
    except BaseException as exc:  # anything else still reaches the parent as one line
        _report(conn, _one_line(exc))


def one_intra_op_thread() -> None:
    """Keep torch (and OpenMP) to one intra-op thread in this worker process."""
    os.environ["OMP_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is None:
        import torch
    torch.set_num_threads(1)


def start_method() -> str:
    """``fork`` where the platform has it and it is safe to use (Linux), else ``spawn``."""
    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def _run_episodes(job: WorkerJob, index: int, conn: Connection) -> None:
    """Build this worker's task, agent and judge, then run episodes as a one-process run does."""
    parts = prepare(job.spec)
    try:
        with RunStore(job.store_path) as store:
            run_episodes(job.spec, parts, store, slots=job.slots,
                         listener=event_sender(conn, index * job.slots),
                         episode_source=episodes_from_parent(conn))
    finally:
        parts.close()


def _one_line(exc: BaseException) -> str:
    """``Type: message (file:line)`` for an unexpected exception, at its innermost frame in
    MAGMA's own packages (else its innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if {"magma_core", "magma_scenarios"} & set(Path(f.filename).parts)]
    frame = (ours or frames or [None])[-1]
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def _report(conn: Connection, line: str) -> None:
    """Send a failure to the parent (if it is still there) and exit with status 1."""
    try:
        conn.send(("error", line))
    except PARENT_GONE:
        pass
    sys.exit(1)


# -- the parent side -----------------------------------------------------------------------
@dataclass
class WorkerHandle:
    """The parent's view of one worker process."""

    index: int
    process: BaseProcess
    conn: Connection
    connected: bool = True
    done: bool = False
    error: str | None = None
    in_flight: set[int] = field(default_factory=set)  # handed to it and not yet ended

    def failure(self) -> str | None:
        """One line saying why this (ended) worker failed, or None if it did not."""
        reason = self._reason()
        if reason is None:
            return None
        lost = ", ".join(str(k) for k in sorted(self.in_flight))
        return f"worker {self.index} {reason}" + (f"; episodes not stored: {lost}" if lost else "")

    def _reason(self) -> str | None:
        code = self.process.exitcode
        if self.error is not None:
            return f"failed: {self.error}"
        if code is not None and code < 0:
            return f"was killed by {_signal_name(-code)}"
        if code:
            return f"exited with status {code}"
        if not self.done:
            return "stopped before its episodes were done"
        return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run_in_workers(
    job: WorkerJob,
    todo: Sequence[int],
    workers: int,
    listener: Listener,
    *,
    target: Callable[[WorkerJob, int, Connection], None] = worker_main,
) -> list[str]:
    """Run the ``todo`` episodes in ``workers`` processes; return one line per failed worker.

    Returns when every worker has ended. Events reach ``listener`` as ``(event, EpisodeNote,
    payload)``, the payload being a ``ViewNote``, an ``OutcomeNote`` or the episode's
    ``EpisodeSummary``. If this call is interrupted, the workers are terminated.
    """
    method = start_method()
    if method == "fork":
        freeze_loaded_objects()  # the children's collector leaves the parent's objects (and pages) alone
    context = multiprocessing.get_context(method)
    pending = deque(todo)
    handles: list[WorkerHandle] = []
    try:
        for index in range(workers):
            handles.append(_start_worker(context, target, job, index, handles))
        _supervise(handles, pending, listener)
    finally:
        _stop(handles)
    return [line for line in (h.failure() for h in handles) if line is not None]


def _start_worker(context: Any, target: Callable, job: WorkerJob, index: int,
                  started: list[WorkerHandle]) -> WorkerHandle:
    """Start one daemon worker with its end of a fresh pipe (the parent drops its copy).

    A forked worker also holds copies of the parent's pipe ends (its own and those of the
    workers started before it): it closes them first, so that the parent's death reaches
    every worker as a broken pipe."""
    parent_end, worker_end = context.Pipe(duplex=True)
    inherited = [parent_end, *(h.conn for h in started)] if context.get_start_method() == "fork" else []
    process = context.Process(
        target=_worker_entry, args=(target, job, index, worker_end, inherited),
        name=f"magma-worker-{index}", daemon=True,
    )
    process.start()
    worker_end.close()
    return WorkerHandle(index, process, parent_end)


def _worker_entry(target: Callable, job: WorkerJob, index: int, conn: Connection,
                  inherited: list[Connection]) -> None:
    """Close the parent's pipe ends a forked worker inherited, then run ``target``."""
    for end in inherited:
        end.close()
    target(job, index, conn)


def _supervise(handles: list[WorkerHandle], pending: deque[int], listener: Listener) -> None:
    """Answer the workers' messages until every worker process has ended."""
    running = list(handles)
    while running:
        conns = [h.conn for h in running if h.connected]
        ready = set(wait(conns + [h.process.sentinel for h in running]))
        for handle in list(running):
            if handle.connected and handle.conn in ready:
                _receive(handle, pending, listener)
            if handle.process.sentinel in ready:
                while handle.connected and handle.conn.poll():
                    _receive(handle, pending, listener)
                handle.process.join()
                handle.conn.close()
                running.remove(handle)


def _receive(handle: WorkerHandle, pending: deque[int], listener: Listener) -> None:
    """Read and act on one message from a worker; a closed pipe marks it disconnected."""
    try:
        message = handle.conn.recv()
    except (EOFError, OSError):
        handle.connected = False
        return
    kind = message[0]
    if kind == "next":
        _hand_out(handle, pending)
    elif kind == "event":
        event, note, payload = message[1:]
        if event == "end" and note is not None:
            handle.in_flight.discard(note.episode)
        listener(event, note, payload)
    elif kind == "done":
        handle.done = True
    elif kind == "error":
        handle.error = message[1]


def _hand_out(handle: WorkerHandle, pending: deque[int]) -> None:
    """Send the worker the next pending episode (or None); keep it if the worker is gone."""
    episode = pending.popleft() if pending else None
    try:
        handle.conn.send(episode)
    except OSError:
        handle.connected = False
        if episode is not None:
            pending.appendleft(episode)
        return
    if episode is not None:
        handle.in_flight.add(episode)


def _stop(handles: list[WorkerHandle]) -> None:
    """Terminate workers still running (after an interrupt), killing any that linger."""
    for handle in handles:
        if handle.process.is_alive():
            handle.process.terminate()
    for handle in handles:
        handle.process.join(STOP_GRACE_S)
        if handle.process.is_alive():
            handle.process.kill()
            handle.process.join()
