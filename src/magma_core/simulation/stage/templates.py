"""Ready-made stages for common interactions (the predecessor's templates, same names).

* ``AskingBaseStage(question, answer)``: the user asks a question; a judge checks the answer
  gives ``answer``. Text-only, budgets 1/1, ``reset_at_end=True``.
* ``ConstraintBaseStage(constraint)``: the user states a rule to remember; a judge checks
  the agent acknowledged it. Text-only, budgets 1/1.
* ``ScoredQuestionStage(question, scorer)``: the user asks a question; a rule-based scorer
  (:mod:`magma_core.simulation.stage.scorers`) checks the answer, no judge model needed.
* ``ModifAttributesBaseStage(mode, stage_input, val_name, att_name)``: the agent must add
  (``"ADD"``) or remove (``"REMOVE"``) ``val_name`` in the list attribute ``att_name``
  through a tool whose log carries that edit. Additive, no goals, budgets 1/1 by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from magma_core.json_types import JSONValue
from magma_core.simulation.data_structures import Log, StageInput, UserInstruction
from magma_core.simulation.stage.base import BaseTaskStage
from magma_core.simulation.stage.parameters import StageGlobalParameters
from magma_core.simulation.stage.scorers import BaseScorer, scorer_from_config

__all__ = ["AskingBaseStage", "ConstraintBaseStage", "ModifAttributesBaseStage", "ScoredQuestionStage"]

EDIT_MODES = ("ADD", "REMOVE")


class AskingBaseStage(BaseTaskStage):
    """A question the agent answers in words; the judge's rule is the expected ``answer``.

    Tools may be allowed before the answer (e.g. a detection tool) with
    ``allow_tools_before_answer`` and ``allowed_tools`` (empty: every tool).
    """

    target_tool_calls = 1
    max_tool_calls = 1

    def __init__(
        self,
        question: str,
        answer: str,
        linked_to_prev: bool = False,
        allow_tools_before_answer: bool = False,
        allowed_tools: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(question, str) or not question.strip():
            raise ValueError("AskingBaseStage.question must be a non-empty str")
        if not isinstance(answer, str) or not answer.strip():
            raise ValueError("AskingBaseStage.answer must be a non-empty str")
        self.question, self.answer = question, answer
        super().__init__(
            goals=[],
            stage_goal_description=f"Answer the user's question: {answer}",
            stage_input=StageInput(UserInstruction(question), False, linked_to_prev),
            global_parameters=StageGlobalParameters(
                reset_at_end=True,
                verification_prompt=f"The model correctly answers: {answer}",
                allow_tools_before_answer=allow_tools_before_answer,
                allowed_tools=list(allowed_tools or []),
            ),
        )
        self.validate()

    def _to_spec_arguments(self) -> dict[str, object]:
        gp = self.global_parameters
        return {
            "question": self.question,
            "answer": self.answer,
            "linked_to_prev": self.stage_input.linked_to_prev,
            "allow_tools_before_answer": gp.allow_tools_before_answer,
            "allowed_tools": list(gp.allowed_tools),
        }


class ScoredQuestionStage(BaseTaskStage):
    """A question the agent answers in words, checked by ``scorer`` (a ``BaseScorer`` or its
    short form, e.g. ``{"one_of": ["two", "2"]}``): no judge model. Budgets 1/1 (with
    ``allow_tools_before_answer``: 1/3, the tools before the answer)."""

    def __init__(
        self,
        question: str,
        scorer: BaseScorer | Mapping[str, JSONValue],
        linked_to_prev: bool = False,
        allow_tools_before_answer: bool = False,
        allowed_tools: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(question, str) or not question.strip():
            raise ValueError("ScoredQuestionStage.question must be a non-empty str")
        self.question = question
        self.scorer = scorer_from_config(scorer)
        self.target_tool_calls, self.max_tool_calls = (1, 3) if allow_tools_before_answer else (1, 1)
        super().__init__(
            goals=[],
            stage_goal_description=f"Answer the user's question ({self.scorer.describe()}).",
            stage_input=StageInput(UserInstruction(question), False, linked_to_prev),
            global_parameters=StageGlobalParameters(
                verification_prompt=f"The answer passes {self.scorer.describe()}",
                allow_tools_before_answer=allow_tools_before_answer,
                allowed_tools=list(allowed_tools or []),
            ),
        )
        self.validate()

    def _to_spec_arguments(self) -> dict[str, object]:
        gp = self.global_parameters
        return {
            "question": self.question,
            "scorer": self.scorer,
            "linked_to_prev": self.stage_input.linked_to_prev,
            "allow_tools_before_answer": gp.allow_tools_before_answer,
            "allowed_tools": list(gp.allowed_tools),
        }


class ConstraintBaseStage(BaseTaskStage):
    """The user gives a rule to keep (``UserInstruction(constraint, has_constraint=True)``);
    the judge checks the agent's reply shows it understood. Later stages check compliance."""

    target_tool_calls = 1
    max_tool_calls = 1

    def __init__(
        self, constraint: str, linked_to_prev: bool = False, reset_at_end: bool = True
    ) -> None:
        if not isinstance(constraint, str) or not constraint.strip():
            raise ValueError("ConstraintBaseStage.constraint must be a non-empty str")
        self.constraint = constraint
        super().__init__(
            goals=[],
            stage_goal_description=f"Acknowledge the rule: {constraint}",
            stage_input=StageInput(
                UserInstruction(constraint, has_constraint=True), False, linked_to_prev
            ),
            global_parameters=StageGlobalParameters(
                reset_at_end=reset_at_end,
                verification_prompt=f"The model understands what the user asked: {constraint}",
            ),
        )
        self.validate()

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "constraint": self.constraint,
            "linked_to_prev": self.stage_input.linked_to_prev,
            "reset_at_end": self.global_parameters.reset_at_end,
        }


class ModifAttributesBaseStage(BaseTaskStage):
    """Done when the stage's last log is the edit ``(mode, (att_name, val_name))``: 0 while
    there is no log yet, -1 when the last log is anything else."""

    def __init__(
        self,
        mode: str,
        stage_input: StageInput | Mapping[str, JSONValue],
        val_name: JSONValue,
        att_name: str,
        target_tool_calls: int = 1,
        max_tool_calls: int = 1,
    ) -> None:
        if mode not in EDIT_MODES:
            raise ValueError(f"ModifAttributesBaseStage.mode must be ADD or REMOVE, got {mode!r}")
        if isinstance(stage_input, Mapping):
            stage_input = StageInput(**stage_input)  # type: ignore[arg-type]  # StageInput checks them
        self.mode, self.val_name, self.att_name = mode, val_name, att_name
        self.target_tool_calls, self.max_tool_calls = target_tool_calls, max_tool_calls
        verb = "Add" if mode == "ADD" else "Remove"
        super().__init__(
            goals=[],
            stage_goal_description=f"{verb} {val_name!r} in the attribute {att_name!r}.",
            stage_input=stage_input,
            global_parameters=StageGlobalParameters(additive_stage=True),
        )
        self.validate()

    def verif_log_completion(self, stage_log: list[Log], full_log: list[Log]) -> int:
        if not stage_log:
            return 0
        last = stage_log[-1]
        content = tuple(last.content) if isinstance(last.content, (list, tuple)) else last.content
        return 1 if last.action == self.mode and content == (self.att_name, self.val_name) else -1

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "stage_input": self.stage_input,
            "val_name": self.val_name,
            "att_name": self.att_name,
            "target_tool_calls": self.target_tool_calls,
            "max_tool_calls": self.max_tool_calls,
        }
