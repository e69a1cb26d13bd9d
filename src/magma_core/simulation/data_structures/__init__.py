"""Layer 1 of the contract: plain data exchanged between scenarios, the engine and agents.

Everything scenario code builds or receives is importable from here, as in the seeds:
``from magma_core.simulation.data_structures import EnvStateUpdate, ToolResult``.
"""

from magma_core.simulation.data_structures.decisions import Decision, DecisionError, ToolCall
from magma_core.simulation.data_structures.enums import StageState, StageSuccess, ToolErrorFlag
from magma_core.simulation.data_structures.error_support import ToolErrorSupport
from magma_core.simulation.data_structures.instructions import (
    EmptyInstruction,
    Instruction,
    StatusInstruction,
    StatusReturn,
    TemplateInstruction,
    UserInstruction,
)
from magma_core.simulation.data_structures.observation import Observation
from magma_core.simulation.data_structures.pose import Pose
from magma_core.simulation.data_structures.situation import Situation, SituationInit, StageInput
from magma_core.simulation.data_structures.tools import (
    GRIPPER_TOKENS,
    EnvStateUpdate,
    Log,
    ToolBatchContext,
    ToolExecution,
    ToolResult,
)

__all__ = [
    "GRIPPER_TOKENS",
    "Decision",
    "DecisionError",
    "EmptyInstruction",
    "EnvStateUpdate",
    "Instruction",
    "Log",
    "Observation",
    "Pose",
    "Situation",
    "SituationInit",
    "StageInput",
    "StageState",
    "StageSuccess",
    "StatusInstruction",
    "StatusReturn",
    "TemplateInstruction",
    "ToolBatchContext",
    "ToolCall",
    "ToolErrorFlag",
    "ToolErrorSupport",
    "ToolExecution",
    "ToolResult",
    "UserInstruction",
]
