"""The motion seam: what the engine asks of motion, and its driver on the simulation layer.

The engine hands a :class:`MotionDriver` the executions of several slots and gets back a
:class:`MotionReport` (which executions failed, and the control steps taken).
:class:`SimMotion` is the driver on a real ``SimBatch``: one
:class:`~magma_core.simulation.motion.MotionRunner` call per batch. Tests drive the engine
with a kinematic stand-in instead. The simulator is imported only when a ``SimMotion`` is
built, so the engine's logic runs without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from magma_core.simulation.data_structures import ToolExecution

if TYPE_CHECKING:
    from magma_core.simulation.executor.simulator import Simulator
    from magma_core.simulation.motion import MotionConfig


@dataclass
class MotionReport:
    """What the motion layer reports for one run: failed executions and steps taken.

    ``failures[slot][i]`` is the reason execution ``i`` of that slot's plan could not be
    planned or reached (a planner error); ``slot_steps[slot]`` the control steps that slot
    took (None: every moving slot took ``steps``).
    """

    failures: dict[int, dict[int, str]] = field(default_factory=dict)
    steps: int = 0
    slot_steps: dict[int, int] | None = None

    def steps_of(self, slot: int) -> int:
        """The control steps ``slot``'s world advanced (``steps`` when not reported per slot)."""
        if self.slot_steps is None:
            return self.steps
        return self.slot_steps.get(slot, 0)


class MotionDriver(Protocol):
    """Runs the trajectories of several slots in the same simulator steps."""

    def run(self, plans: Mapping[int, Sequence[ToolExecution]]) -> MotionReport: ...


class SimMotion:
    """Runs the executions of several slots through one ``MotionRunner`` call.

    Within a slot, executions keep their call order (execution groups and robots run in
    that order); all slots step together.
    """

    def __init__(self, sim: Simulator, config: MotionConfig | None = None) -> None:
        from magma_core.simulation.motion import MotionRunner  # the simulator: imported late

        self._runner = MotionRunner(sim, config)

    def run(self, plans: Mapping[int, Sequence[ToolExecution]]) -> MotionReport:
        from magma_core.simulation.motion import MotionPlan

        flat: list[MotionPlan] = []
        where: list[tuple[int, int]] = []
        for slot, executions in plans.items():
            for index, execution in enumerate(executions):
                flat.append(MotionPlan.from_tool(slot, execution))
                where.append((slot, index))
        run = self._runner.run(flat)
        failures: dict[int, dict[int, str]] = {}
        for plan_index, reason in run.failures().items():
            slot, index = where[plan_index]
            failures.setdefault(slot, {})[index] = reason
        return MotionReport(failures=failures, steps=run.steps, slot_steps=dict(run.slot_steps))


def default_motion(sim: Simulator) -> SimMotion:
    """The motion driver for a real ``SimBatch``."""
    return SimMotion(sim)
