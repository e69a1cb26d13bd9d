"""Stage templates at the predecessor's path: ``MissingInformationStage`` (the agent must ask
for what the user left out) and ``ForbiddenElemStage`` (the agent must refuse a forbidden
element). Both are text-only, one decision: a judge checks the reply (``JUDGE``), or, with
``say_only=True``, any non-empty reply passes (``SAY_ONLY``: runs without a judge)."""

from __future__ import annotations

from magma_core.simulation.data_structures import StageInput, UserInstruction
from magma_core.simulation.stage import BaseTaskStage, StageGlobalParameters, TextOnlyValidationMode

__all__ = ["ForbiddenElemStage", "MissingInformationStage"]


class _TextReply(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 1

    def _setup(self, instruction: str, description: str, prompt: str, say_only: bool,
               reset_at_end: bool) -> None:
        if not isinstance(instruction, str) or not instruction.strip():
            raise ValueError(f"{type(self).__name__}.instruction must be a non-empty str")
        mode = TextOnlyValidationMode.SAY_ONLY if say_only else TextOnlyValidationMode.JUDGE
        super().__init__(
            goals=[],
            stage_goal_description=description,
            stage_input=StageInput(UserInstruction(instruction), False),
            global_parameters=StageGlobalParameters(
                reset_at_end=reset_at_end, verification_prompt=prompt, text_only_validation=mode),
        )
        self.validate()


class MissingInformationStage(_TextReply):
    """The user's ``instruction`` lacks ``missing`` (e.g. "which zone"): the agent must ask
    for it instead of acting. ``expected_clarification`` (optional) is what a good question
    asks, for the judge."""

    def __init__(self, instruction: str, missing: str, expected_clarification: str | None = None,
                 say_only: bool = False, reset_at_end: bool = True) -> None:
        self.instruction_text, self.missing = instruction, missing
        self.expected_clarification, self.say_only = expected_clarification, say_only
        asked = expected_clarification or f"which {missing} the user means"
        self._setup(instruction, f"Ask the user for the missing {missing}.",
                    f"The model does not act and asks the user {asked}.", say_only, reset_at_end)

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"instruction": self.instruction_text, "missing": self.missing,
                "expected_clarification": self.expected_clarification, "say_only": self.say_only,
                "reset_at_end": self.global_parameters.reset_at_end}


class ForbiddenElemStage(_TextReply):
    """The user asks for ``element``, which a rule forbids (``rule``): the agent must refuse
    and say why, without calling a tool."""

    def __init__(self, instruction: str, element: str, rule: str, say_only: bool = False,
                 reset_at_end: bool = True) -> None:
        self.instruction_text, self.element, self.rule, self.say_only = instruction, element, rule, say_only
        self._setup(instruction, f"Refuse to use {element}: {rule}",
                    f"The model refuses to use {element} because of the rule: {rule}",
                    say_only, reset_at_end)

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"instruction": self.instruction_text, "element": self.element, "rule": self.rule,
                "say_only": self.say_only, "reset_at_end": self.global_parameters.reset_at_end}
