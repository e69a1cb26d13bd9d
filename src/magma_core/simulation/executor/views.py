"""What the agent sees: batch feedback, stage inputs, and the ``AgentView`` of a slot.

After a batch, the feedback is a status dict ``{"infos", "previous_tool_call",
"failure_reason"?}`` shown as an ``env`` message (its JSON, as ``StatusInstruction``). At a
stage boundary: an ``EmptyInstruction`` stage shows the last feedback; a direct instruction
shows the user's words; after an action stage, a direct instruction is a delayed input (an
interruption): the view carries the last feedback and then the new instruction.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import StatusInstruction
from magma_core.simulation.executor.records import AgentView, CallOutcome, ViewMessage
from magma_core.simulation.executor.slots import EngineContext, SlotState

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.stage import BaseTaskStage

DEFAULT_INFOS = "The action has completed."


def build_feedback(
    calls: Sequence[CallOutcome],
    decision_calls: Sequence[JSONDict] = (),
    *,
    infos: str | None = None,
    failure_reason: str | None = None,
) -> JSONDict:
    """The status dict of one step: feedback lines per call, the calls, a failure reason."""
    lines = [line for c in calls if (line := c.to_line())]
    text = infos if infos is not None else ("\n".join(lines) if lines else DEFAULT_INFOS)
    status: JSONDict = {"infos": text, "previous_tool_call": list(decision_calls)}
    if failure_reason:
        status["failure_reason"] = failure_reason
    return status


def feedback_message(feedback: JSONDict) -> ViewMessage:
    return ViewMessage("env", StatusInstruction(feedback).content)


def stage_entry_messages(
    ctx: EngineContext,
    state: SlotState,
    feedback: JSONDict | None,
    previous_was_action: bool,
) -> list[ViewMessage]:
    """The inputs that open the current stage (see the module docstring)."""
    stage = ctx.stages[state.stage_index]
    instruction = stage.stage_input.instruction
    if instruction.is_empty():
        return [feedback_message(feedback)] if feedback is not None else [ViewMessage("env", "")]
    content = instruction.get_content()
    state.last_user_instruction = content
    messages = []
    if previous_was_action and feedback is not None:
        messages.append(feedback_message(feedback))
    messages.append(ViewMessage("user", content))
    return messages


def callable_tools(stage: BaseTaskStage) -> list[str] | None:
    """The tool names a stage lets the agent call: None (every tool) in an action stage; in a
    text-only stage none, unless it allows tools before its answer (``allowed_tools``, or
    every tool when that list is empty)."""
    if not stage.is_text_only():
        return None
    params = stage.global_parameters
    if not params.allow_tools_before_answer:
        return []
    return sorted(params.allowed_tools) or None


def build_view(ctx: EngineContext, state: SlotState) -> AgentView:
    """The slot's current ``AgentView``."""
    stage = ctx.stages[state.stage_index]
    messages = list(state.messages) or [ViewMessage("env", "")]
    last = messages[-1]
    return AgentView(
        slot=state.slot,
        instruction=last.content,
        kind=last.kind,
        messages=messages,
        tools=copy.deepcopy(ctx.tool_descriptions),
        attributes=copy.deepcopy(state.attributes),
        robot_names=list(ctx.robot_names),
        stage_index=state.stage_index,
        num_stages=ctx.num_stages,
        linked_to_prev=bool(stage.stage_input.linked_to_prev),
        text_only=bool(stage.is_text_only()),
        episode_over=not state.running,
        status=state.status,
        feedback=copy.deepcopy(state.feedback),
        callable_tools=callable_tools(stage),
    )
