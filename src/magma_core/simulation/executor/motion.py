"""The engine's motion driver on the simulation layer's ``MotionRunner``.

Imported lazily (it needs the simulator): the engine's logic runs without it on stand-ins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from magma_core.simulation.data_structures import ToolExecution
from magma_core.simulation.executor.batch import MotionReport
from magma_core.simulation.motion import MotionConfig, MotionPlan, MotionRunner


class _StepCounter:
    """Delegates to a ``SimBatch`` and counts the control steps the motion layer takes."""

    def __init__(self, sim: Any) -> None:
        self._sim = sim
        self.steps = 0

    def step_physics(self, actions: Any, slots: Any = None) -> None:
        self.steps += 1
        self._sim.step_physics(actions, slots=slots)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sim, name)


class SimMotion:
    """Runs the executions of several slots through one ``MotionRunner`` call.

    Within a slot, executions keep their call order (execution groups and robots run in
    that order); all slots step together.
    """

    def __init__(self, sim: Any, config: MotionConfig | None = None) -> None:
        self._counter = _StepCounter(sim)
        self._runner = MotionRunner(self._counter, config)

    def run(self, plans: Mapping[int, Sequence[ToolExecution]]) -> MotionReport:
        flat: list[MotionPlan] = []
        where: list[tuple[int, int]] = []
        for slot, executions in plans.items():
            for index, execution in enumerate(executions):
                flat.append(MotionPlan.from_tool(slot, execution))
                where.append((slot, index))
        before = self._counter.steps
        results = self._runner.run(flat)
        failures: dict[int, dict[int, str]] = {}
        for (slot, index), result in zip(where, results, strict=True):
            if not result.ok:
                failures.setdefault(slot, {})[index] = result.reason
        return MotionReport(failures=failures, steps=self._counter.steps - before)


def default_motion(sim: Any) -> SimMotion:
    """The motion driver for a real ``SimBatch``."""
    return SimMotion(sim)
