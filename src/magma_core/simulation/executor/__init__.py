"""Layer 5: THE execution engine. Every front end drives a task through ``Executor``.

``Executor(task, num_slots)`` runs one task in N simulator slots: ``agent_view(slot)``,
``submit({slot: Decision})`` → ``{slot: StepOutcome}``, ``record(slot)`` → ``EpisodeRecord``,
``snapshot(slot)`` → ``SlotSnapshot`` and ``restore(slot, snapshot)`` (into any slot).
The simulator is only imported when an executor builds its own ``SimBatch``.
"""

from magma_core.simulation.data_structures.verdict import Judge, Verdict
from magma_core.simulation.executor.batch import MAX_PLANNER_RETRIES
from magma_core.simulation.executor.executor import Executor
from magma_core.simulation.executor.motion import MotionDriver, MotionReport
from magma_core.simulation.executor.records import (
    ENGINE_STATUSES,
    ERROR,
    EXCEEDED,
    FAILED,
    JUDGE_ERROR,
    JUDGE_UNAVAILABLE,
    RUNNING,
    SUCCESS,
    AgentView,
    CallOutcome,
    EpisodeRecord,
    StageRecord,
    StepOutcome,
    StepRecord,
    ViewMessage,
)
from magma_core.simulation.executor.simulator import Simulator
from magma_core.simulation.executor.slots import MAX_FORGIVEN_TOOL_CALLS_PER_STAGE
from magma_core.simulation.executor.snapshots import SlotSnapshot

__all__ = [
    "ENGINE_STATUSES",
    "ERROR",
    "EXCEEDED",
    "FAILED",
    "JUDGE_ERROR",
    "JUDGE_UNAVAILABLE",
    "MAX_FORGIVEN_TOOL_CALLS_PER_STAGE",
    "MAX_PLANNER_RETRIES",
    "RUNNING",
    "SUCCESS",
    "AgentView",
    "CallOutcome",
    "EpisodeRecord",
    "Executor",
    "Judge",
    "MotionDriver",
    "MotionReport",
    "Simulator",
    "StageRecord",
    "StepOutcome",
    "SlotSnapshot",
    "StepRecord",
    "Verdict",
    "ViewMessage",
]
