"""Per-slot episode state and the context every engine step works in.

A slot runs one episode at a time. ``SlotState`` holds everything about that episode that
is not in the simulator: stage index, counters, logs, visible attributes, sampled errors,
the reference snapshot for ``reset_at_end``, what the agent sees next, and the record.
"""

from __future__ import annotations

import random
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import Log
from magma_core.simulation.data_structures.tools import ErrorArgs
from magma_core.simulation.data_structures.verdict import Judge
from magma_core.simulation.errors.base import BaseError
from magma_core.simulation.executor.motion import MotionDriver
from magma_core.simulation.executor.records import (
    RUNNING,
    EpisodeRecord,
    ViewMessage,
)
from magma_core.simulation.executor.simulator import Simulator
from magma_core.simulation.executor.skill_state import SkillAPI, SkillSlotState
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI

if TYPE_CHECKING:  # the simulator's type, named for the annotations only (no simulator import)
    from magma_core.simulation.envs.sim_batch import WorldSnapshot

# At most this many failed calls per stage are forgiven (not counted against the budget)
# because the system caused them: an injected error, or a motion the planner could not plan.
MAX_FORGIVEN_TOOL_CALLS_PER_STAGE = 3


@dataclass
class EngineContext:
    """What the engine's step functions share: the task's stages, simulator, motion and tools."""

    task: BaseTask
    stages: list[BaseTaskStage]
    sim: Simulator
    motion: MotionDriver
    tools: list[BaseToolsAPI]  # one bound tool instance per slot
    robot_names: list[str]
    tool_descriptions: list[JSONDict]
    judge: Judge | None = None
    skills: SkillAPI | None = None  # when the task runs with skills (see skill_steps)
    #: stage -> what checking its goals on the whole batch found ("" when right; see
    #: ``verification.check_goals_on_batch``); weak keys: a generated task's stages may go
    goal_batch_checks: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)

    @property
    def num_stages(self) -> int:
        return len(self.stages)


@dataclass
class SlotState:
    """The running episode of one slot."""

    slot: int
    seed: int
    rng: random.Random
    record: EpisodeRecord
    attributes: JSONDict
    reference: WorldSnapshot | None = None
    status: str = RUNNING
    stage_index: int = 0
    tool_calls: int = 0
    forgiven_tool_calls: int = 0
    logs: list[Log] = field(default_factory=list)
    stage_log_start: int = 0
    active_errors: list[BaseError] = field(default_factory=list)
    error_args: ErrorArgs = field(default_factory=dict)
    messages: list[ViewMessage] = field(default_factory=list)
    feedback: JSONDict | None = None
    last_user_instruction: str = ""
    step_index: int = 0
    skills: SkillSlotState | None = None  # when the task runs with skills

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    @property
    def effective_tool_calls(self) -> int:
        """Tool calls of the current stage minus the forgiven ones."""
        return self.tool_calls - self.forgiven_tool_calls

    def stage_logs(self) -> list[Log]:
        """The logs of the current stage."""
        return self.logs[self.stage_log_start :]

    def enter_stage(self, index: int) -> None:
        """Start stage ``index``: reset the stage counters, the log start and the errors."""
        self.stage_index = index
        self.tool_calls = 0
        self.forgiven_tool_calls = 0
        self.stage_log_start = len(self.logs)
        self.active_errors = []
        self.error_args = {}
        self.record.stages[index].started = True
