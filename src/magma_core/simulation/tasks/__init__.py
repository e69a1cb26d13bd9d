"""Tasks: the declaration of a world, its tools, its initial situation and its stages.

``BaseTask`` is pure declaration; the engine (``magma_core.simulation.executor``) runs it.
``materialize_completion_stages`` turns answer flags into explicit completion stages, and
``PerfectTrace`` holds a task's reference solution. Procedural tasks: a ``TaskDefinition``
lists ``BaseRequest``s; ``generate_task(definition, seed)`` (or ``definition.generate(seed)``)
chains them into a ``GeneratedTask``, which ``task_to_json`` / ``task_from_json`` freeze and
rebuild; ``TaskState``, ``BaseConstraint`` and ``RuleRenderer`` are the generation-time model.
"""

from magma_core.simulation.data_structures.task_state import RuleRenderer, TaskState
from magma_core.simulation.tasks.base_task import BaseTask
from magma_core.simulation.tasks.completion import (
    detection_tool_names,
    judged_stage_indices,
    materialize_completion_stages,
)
from magma_core.simulation.tasks.constraints import (
    AttributesModifConstraint,
    BaseConstraint,
    ForbidConstraint,
)
from magma_core.simulation.tasks.definition import TaskDefinition
from magma_core.simulation.tasks.generated import (
    GeneratedTask,
    RequestRecord,
    task_from_json,
    task_to_json,
)
from magma_core.simulation.tasks.generator import generate_task
from magma_core.simulation.tasks.parameters import (
    InitializationParameters,
    TaskMetadata,
    TaskStyle,
)
from magma_core.simulation.tasks.perfect_trace import (
    Call,
    GoalRef,
    MessageEvent,
    PerfectTrace,
    RuleRef,
    TodoRef,
    ToolCallEvent,
    ToolResultEvent,
    TraceEvent,
    TraceToolResult,
    UserEvent,
)
from magma_core.simulation.tasks.requests import BaseRequest

__all__ = [
    "AttributesModifConstraint",
    "BaseConstraint",
    "BaseRequest",
    "BaseTask",
    "ForbidConstraint",
    "GeneratedTask",
    "RequestRecord",
    "RuleRenderer",
    "TaskDefinition",
    "TaskState",
    "generate_task",
    "task_from_json",
    "task_to_json",
    "InitializationParameters",
    "MessageEvent",
    "Call",
    "GoalRef",
    "RuleRef",
    "TodoRef",
    "ToolResultEvent",
    "TraceToolResult",
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
