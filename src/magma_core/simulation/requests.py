"""``BaseRequest`` and the perfect-trace types at the predecessor's import path (defined in
``simulation.tasks.requests`` and ``simulation.tasks.perfect_trace``)."""

from magma_core.simulation.tasks.perfect_trace import (
    Call,
    GoalRef,
    MessageEvent,
    PerfectTrace,
    RuleRef,
    TodoRef,
    ToolCallEvent,
    ToolResultEvent,
    TraceToolResult,
    UserEvent,
)
from magma_core.simulation.tasks.requests import BaseRequest

__all__ = ["BaseRequest", "Call", "GoalRef", "MessageEvent", "PerfectTrace", "RuleRef",
           "TodoRef", "ToolCallEvent", "ToolResultEvent", "TraceToolResult", "UserEvent"]
