"""``magma gen --record-control``: each executed candidate's control steps, stored with it.

The generator executes a candidate by restoring its situation's snapshot into a slot and
submitting the decision there. :class:`RecordingEngine` wraps the engine (built with
``record_control``): a restore drops whatever the slot recorded before (it belongs to no
candidate), and a submit keeps each slot's steps until the generator takes them
(:meth:`RecordingEngine.steps_of`, right after the submit; the generator holds them with the
candidate until its wave is stored). :class:`RecordingStore` wraps the generation store: an
executed candidate is added together with its steps (``gen_control_steps``,
:mod:`magma_core.store.control_steps`). A candidate starts exactly where its situation's world
is, so its first step is not marked ``restored``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from magma_core.store.control_steps import pack_control

__all__ = ["RecordingEngine", "RecordingStore"]


class RecordingEngine:
    """``engine`` with each submitted slot's control steps kept until :meth:`take_steps`."""

    def __init__(self, engine: Any, recorder: Any) -> None:
        self._engine = engine
        self.recorder = recorder
        self._pending: dict[int, list[dict[str, Any]]] = {}
        self._joints: dict[str, list[str]] | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._engine, name)

    def restore(self, slot: int, snapshot: Any) -> None:
        self._engine.restore(slot, snapshot)
        self.recorder.take(slot)  # a restore before a candidate: nothing before it is its
        self._pending.pop(slot, None)

    def submit(self, decisions: Mapping[int, Any]) -> dict[int, Any]:
        outcomes = self._engine.submit(decisions)
        for slot in decisions:
            steps = self.recorder.take(slot)
            if steps:
                steps[0].pop("restored", None)  # the candidate's situation: continuous
            self._pending[slot] = steps
        return outcomes

    def steps_of(self, slot: int) -> list[dict[str, Any]]:
        """The steps ``slot`` took in its last submit (the generator takes them right after
        it, and stores them with the candidate when its wave is stored)."""
        return self._pending.pop(slot, None) or []

    def pack(self, candidate: int, steps: list[dict[str, Any]]) -> tuple[int, int, bytes] | None:
        """The store row of ``steps`` as ``candidate``'s (None when it took none)."""
        if not steps:
            return None
        if self._joints is None:
            self._joints = self.recorder.joint_names()
        return pack_control(candidate, self.recorder.rate, self._joints, steps)


class RecordingStore:
    """``store`` whose executed candidates are added with their control steps."""

    def __init__(self, store: Any, engine: RecordingEngine) -> None:
        self._store = store
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._store, name)

    def add_candidate(self, name: str, candidate: Any, child: Any, close_situation: bool,
                      control_steps: list[dict[str, Any]] | None = None) -> None:
        control = self._engine.pack(candidate.id, control_steps or [])
        self._store.add_candidate(name, candidate, child, close_situation, control=control)
