"""Stages shared by the built-in scenarios: put objects in zones, answer a question, count
objects in a zone, acknowledge a rule."""

from __future__ import annotations

from collections.abc import Mapping

from magma_core.simulation.data_structures import (
    EmptyInstruction,
    Instruction,
    StageInput,
    UserInstruction,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import And, At, CountAt
from magma_core.simulation.stage import (
    BaseTaskStage,
    StageErrorParameters,
    StageGlobalParameters,
    TextOnlyValidationMode,
)
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition

ZONE_THRESH = 0.08  # an object within 8 cm (XY) of a zone's centre is in it


def _instruction(text: str | None) -> Instruction:
    return EmptyInstruction() if text is None else UserInstruction(text)


class ObjectsToZones(BaseTaskStage):
    """Every object of ``placements`` ends in its zone. Optimal: a pick and a place for each of
    the ``moves`` objects that must move (default: all of them), plus ``extra_calls``.

    ``instruction=None`` continues the previous request (``EmptyInstruction``).
    """

    def __init__(
        self,
        placements: Mapping[str, str],
        instruction: str | None,
        flag_answer_to_user: bool = False,
        *,
        reset_at_end: bool = False,
        entry_transition: BaseStageEnvironmentTransition | None = None,
        errors: list[BaseError] | None = None,
        extra_calls: int = 0,
        moves: int | None = None,
        additive: bool = False,
    ) -> None:
        if not placements:
            raise ValueError("ObjectsToZones needs at least one placement")
        self.placements = dict(placements)
        self.instruction_text = instruction
        self.extra_calls = extra_calls
        self.moves = len(self.placements) if moves is None else moves
        self.target_tool_calls = 2 * self.moves + extra_calls
        self.max_tool_calls = 2 * self.target_tool_calls
        goals = [At(obj, zone, thresh=ZONE_THRESH) for obj, zone in self.placements.items()]
        described = ", ".join(f"{o} in {z}" for o, z in self.placements.items())
        super().__init__(
            goals=[And(goals)] if len(goals) > 1 else goals,
            stage_goal_description=f"On the table: {described}.",
            stage_input=StageInput(_instruction(instruction), flag_answer_to_user),
            global_parameters=StageGlobalParameters(
                reset_at_end=reset_at_end, additive_stage=additive
            ),
            error_parameters=StageErrorParameters(
                list(errors or []), len(errors or []), len(errors or [])
            ),
            entry_transition=entry_transition,
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "placements": self.placements,
            "instruction": self.instruction_text,
            "flag_answer_to_user": self.stage_input.flag_answer_to_user,
            "reset_at_end": self.global_parameters.reset_at_end,
            "entry_transition": self.entry_transition,
            "errors": list(self.error_parameters.possible_errors),
            "extra_calls": self.extra_calls,
            "moves": self.moves,
            "additive": self.global_parameters.additive_stage,
        }


class AnswerQuestion(BaseTaskStage):
    """A text-only question judged against ``rule`` (JUDGE validation); no tool is allowed.

    ``say_only=True`` accepts any non-empty answer instead (SAY_ONLY: no judge needed).
    """

    target_tool_calls = 0
    max_tool_calls = 0

    def __init__(self, question: str, rule: str, say_only: bool = False) -> None:
        self.question = question
        self.rule = rule
        self.say_only = say_only
        mode = TextOnlyValidationMode.SAY_ONLY if say_only else TextOnlyValidationMode.JUDGE
        super().__init__(
            goals=[],
            stage_goal_description=rule,
            stage_input=StageInput(UserInstruction(question), flag_answer_to_user=False),
            global_parameters=StageGlobalParameters(
                verification_prompt=rule, text_only_validation=mode
            ),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"question": self.question, "rule": self.rule, "say_only": self.say_only}


class CountInZone(BaseTaskStage):
    """At least ``count`` of ``objects`` lie in ``zone``, in any order. Optimal: a pick and a
    place (``2 * moves`` calls). ``instruction=None`` continues the previous request."""

    def __init__(
        self,
        objects: list[str],
        zone: str,
        count: int,
        instruction: str | None,
        flag_answer_to_user: bool = False,
        moves: int = 1,
    ) -> None:
        self.objects = list(objects)
        self.zone = zone
        self.count = count
        self.instruction_text = instruction
        self.moves = moves
        self.target_tool_calls = 2 * moves
        self.max_tool_calls = 2 * self.target_tool_calls
        super().__init__(
            goals=[CountAt(self.objects, zone, count, thresh=ZONE_THRESH)],
            stage_goal_description=f"At least {count} of {', '.join(self.objects)} in {zone}.",
            stage_input=StageInput(_instruction(instruction), flag_answer_to_user),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "objects": self.objects,
            "zone": self.zone,
            "count": self.count,
            "instruction": self.instruction_text,
            "flag_answer_to_user": self.stage_input.flag_answer_to_user,
            "moves": self.moves,
        }


class Acknowledge(BaseTaskStage):
    """A text-only SAY_ONLY stage: the agent acknowledges ``instruction`` (e.g. a rule)."""

    target_tool_calls = 0
    max_tool_calls = 0

    def __init__(self, instruction: str) -> None:
        self.instruction_text = instruction
        super().__init__(
            goals=[],
            stage_goal_description="Acknowledge the user's rule.",
            stage_input=StageInput(UserInstruction(instruction), flag_answer_to_user=False),
            global_parameters=StageGlobalParameters(
                verification_prompt="The model acknowledges the rule: " + instruction,
                text_only_validation=TextOnlyValidationMode.SAY_ONLY,
            ),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"instruction": self.instruction_text}


class AddArea(BaseTaskStage):
    """An additive stage: the agent adds ``area`` to its known areas (an ADD attribute edit).

    Verified on the logs: done once a log adds ``area`` to the ``areas`` attribute.
    """

    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, area: str, instruction: str) -> None:
        self.area = area
        self.instruction_text = instruction
        super().__init__(
            goals=[],
            stage_goal_description=f"{area} is a known area.",
            stage_input=StageInput(UserInstruction(instruction), flag_answer_to_user=False),
            global_parameters=StageGlobalParameters(additive_stage=True),
        )

    def verif_log_completion(self, stage_log: list, full_log: list) -> int:
        added = any(
            log.action == "ADD" and tuple(log.content) == ("areas", self.area) for log in stage_log
        )
        return 1 if added else 0

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"area": self.area, "instruction": self.instruction_text}
