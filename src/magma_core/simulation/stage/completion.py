"""``CompletionAnswerStage``: the agent tells the user the requested work is done."""

from __future__ import annotations

from collections.abc import Sequence

from magma_core.simulation.data_structures import EmptyInstruction, StageInput
from magma_core.simulation.stage.base import BaseTaskStage
from magma_core.simulation.stage.parameters import StageGlobalParameters, TextOnlyValidationMode

COMPLETION_GOAL = "Clearly inform the user that the mission is complete."
COMPLETION_PROMPT = (
    "The model gives the user a non-empty message stating that the requested work is complete."
)


class CompletionAnswerStage(BaseTaskStage):
    """A text-only SAY_ONLY stage, linked to the previous input, with no goals.

    ``allowed_tools`` names detection tools the agent may call before answering (budgets 1/3);
    without any, no tool is allowed (budgets 0/0).
    """

    def __init__(
        self, allowed_tools: Sequence[str] | None = None, reset_at_end: bool = False
    ) -> None:
        if isinstance(allowed_tools, str):
            raise TypeError("allowed_tools is a list of tool names, not one str")
        tools = sorted(set(allowed_tools or []))
        if not all(isinstance(t, str) and t for t in tools):
            raise TypeError(f"allowed_tools must hold non-empty tool names, got {tools!r}")
        if not isinstance(reset_at_end, bool):
            raise TypeError("reset_at_end must be a bool")
        self.target_tool_calls, self.max_tool_calls = (1, 3) if tools else (0, 0)
        super().__init__(
            goals=[],
            stage_goal_description=COMPLETION_GOAL,
            stage_input=StageInput(EmptyInstruction(), flag_answer_to_user=False),
            global_parameters=StageGlobalParameters(
                reset_at_end=reset_at_end,
                verification_prompt=COMPLETION_PROMPT,
                allow_tools_before_answer=bool(tools),
                allowed_tools=tools,
                text_only_validation=TextOnlyValidationMode.SAY_ONLY,
            ),
        )
        self.validate()

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "allowed_tools": list(self.global_parameters.allowed_tools),
            "reset_at_end": self.global_parameters.reset_at_end,
        }
