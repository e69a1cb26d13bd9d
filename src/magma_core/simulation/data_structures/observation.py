"""The wrapper a tool receives when it is called."""

from __future__ import annotations

from dataclasses import dataclass, field

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.tools import ToolBatchContext


@dataclass
class Observation:
    """What a tool sees: its robot, the current attributes, the batched raw observation,
    the task's constants and the batch's shared reservation context."""

    selected_robot_name: str
    task_attributes: JSONDict
    maniskill_obs: dict[str, object]
    add_constants: dict[str, object] = field(default_factory=dict)
    tool_batch_context: ToolBatchContext = field(default_factory=lambda: ToolBatchContext())
