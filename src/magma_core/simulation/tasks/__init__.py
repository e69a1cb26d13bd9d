"""Tasks: the declaration of a world, its tools, its initial situation and its stages.

``BaseTask`` is pure declaration; the engine (``magma_core.simulation.executor``) runs it.
``materialize_completion_stages`` turns answer flags into explicit completion stages, and
``PerfectTrace`` holds a task's reference solution.
"""

from magma_core.simulation.tasks.base_task import BaseTask
from magma_core.simulation.tasks.completion import (
    detection_tool_names,
    judged_stage_indices,
    materialize_completion_stages,
)
from magma_core.simulation.tasks.parameters import (
    InitializationParameters,
    TaskMetadata,
    TaskStyle,
)
from magma_core.simulation.tasks.perfect_trace import (
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    TraceEvent,
    UserEvent,
)

__all__ = [
    "BaseTask",
    "InitializationParameters",
    "MessageEvent",
    "PerfectTrace",
    "TaskMetadata",
    "TaskStyle",
    "ToolCallEvent",
    "TraceEvent",
    "UserEvent",
    "detection_tool_names",
    "judged_stage_indices",
    "materialize_completion_stages",
]
