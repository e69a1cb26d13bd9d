"""The kitchen's question stage: an answer that may need a look inside first.

``LookInside`` is text-only: the agent may open or close drawers and the box and look
(``detect_objects``) before answering; its budget is the reference solution's ``calls``.
The answer is judged against ``fact`` (JUDGE), or any answer passes (``say_only=True``).
"""

from __future__ import annotations

from magma_core.simulation.data_structures import StageInput, UserInstruction
from magma_core.simulation.stage import (
    BaseTaskStage,
    StageGlobalParameters,
    TextOnlyValidationMode,
)

LOOK_TOOLS = ["close", "detect_objects", "open", "unlatch"]


class LookInside(BaseTaskStage):
    """A question whose answer (``fact``) may need drawers or the lid opened first."""

    def __init__(self, question: str, fact: str, calls: int = 0, say_only: bool = False) -> None:
        self.question = question
        self.fact = fact
        self.calls = int(calls)
        self.say_only = bool(say_only)
        self.target_tool_calls = self.calls
        self.max_tool_calls = 2 * self.calls + 1
        rule = f"The answer says that {fact}."
        mode = TextOnlyValidationMode.SAY_ONLY if say_only else TextOnlyValidationMode.JUDGE
        super().__init__(
            goals=[],
            stage_goal_description=rule,
            stage_input=StageInput(UserInstruction(question), flag_answer_to_user=False),
            global_parameters=StageGlobalParameters(
                verification_prompt=rule,
                text_only_validation=mode,
                allow_tools_before_answer=True,
                allowed_tools=list(LOOK_TOOLS),
            ),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"question": self.question, "fact": self.fact, "calls": self.calls,
                "say_only": self.say_only}
