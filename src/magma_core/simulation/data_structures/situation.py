"""Stage inputs and the task's initial situation (attributes, memory, history)."""

from __future__ import annotations

import copy

from magma_core.json_types import JSONDict
from magma_core.serialization import contract_base, object_from_spec, object_to_spec
from magma_core.simulation.data_structures.instructions import EmptyInstruction, Instruction


@contract_base
class StageInput:
    """The declarative input of a stage: an instruction and the completion-answer flag.

    With an ``EmptyInstruction`` the stage is always linked to the previous one; otherwise
    ``linked_to_prev=None`` means unlinked.
    """

    def __init__(
        self,
        instruction: Instruction,
        flag_answer_to_user: bool,
        linked_to_prev: bool | None = None,
    ) -> None:
        if not isinstance(instruction, Instruction):
            raise TypeError(
                f"StageInput.instruction must be an Instruction, got {type(instruction).__name__}"
            )
        if not isinstance(flag_answer_to_user, bool):
            raise TypeError(
                "StageInput.flag_answer_to_user must be a bool, "
                f"got {type(flag_answer_to_user).__name__}"
            )
        if linked_to_prev is not None and not isinstance(linked_to_prev, bool):
            raise TypeError("StageInput.linked_to_prev must be a bool or None")
        self.instruction = instruction
        self.flag_answer_to_user = flag_answer_to_user
        self.linked_to_prev = True if instruction.is_empty() else bool(linked_to_prev)

    def __repr__(self) -> str:
        return (
            f"StageInput({self.instruction!r}, flag_answer_to_user={self.flag_answer_to_user}, "
            f"linked_to_prev={self.linked_to_prev})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StageInput)
            and self.instruction == other.instruction
            and self.flag_answer_to_user == other.flag_answer_to_user
            and self.linked_to_prev == other.linked_to_prev
        )

    __hash__ = None  # type: ignore[assignment]

    def to_spec(self) -> JSONDict:
        return object_to_spec(
            self,
            {
                "instruction": self.instruction,
                "flag_answer_to_user": self.flag_answer_to_user,
                "linked_to_prev": self.linked_to_prev,
            },
        )

    @classmethod
    def from_spec(cls, spec: JSONDict) -> StageInput:
        return object_from_spec(spec, cls)


class SituationInit:
    """What the task starts with: visible attributes, the superset of all values, memory, history."""

    def __init__(
        self,
        attributes: JSONDict,
        all_task_attributes: JSONDict | None = None,
        memory: JSONDict | None = None,
        history: list[object] | None = None,
    ) -> None:
        if not isinstance(attributes, dict):
            raise TypeError("SituationInit.attributes must be a dict")
        if all_task_attributes is not None and not isinstance(all_task_attributes, dict):
            raise TypeError("SituationInit.all_task_attributes must be a dict or None")
        if memory is not None and not isinstance(memory, dict):
            raise TypeError("SituationInit.memory must be a dict or None")
        if history is not None and not isinstance(history, list):
            raise TypeError("SituationInit.history must be a list or None")
        self.attributes = attributes
        self.all_task_attributes = attributes if all_task_attributes is None else all_task_attributes
        self.memory = {} if memory is None else memory
        self.history = [] if history is None else history

    def to_situation(self, stage_input: StageInput) -> Situation:
        return Situation(
            memory=copy.deepcopy(self.memory),
            attributes=copy.deepcopy(self.attributes),
            instruction=stage_input.instruction,
            flag_answer_to_user=stage_input.flag_answer_to_user,
            history=copy.deepcopy(self.history),
        )


_SITUATION_FIELDS = {"memory", "attributes", "instruction", "flag_answer_to_user", "history"}


class Situation:
    """A runtime situation: memory, current attributes, the instruction and history."""

    def __init__(
        self,
        memory: JSONDict,
        attributes: JSONDict | None = None,
        instruction: Instruction | None = None,
        flag_answer_to_user: bool = False,
        history: list[object] | None = None,
    ) -> None:
        if not isinstance(memory, dict):
            raise TypeError("Situation.memory must be a dict")
        self.memory = memory
        self.attributes = {} if attributes is None else attributes
        self.instruction = EmptyInstruction() if instruction is None else instruction
        self.flag_answer_to_user = flag_answer_to_user
        self.history = [] if history is None else history

    def copy_with(self, **changes: object) -> Situation:
        """A deep copy of memory, attributes and history, with ``changes`` applied."""
        unknown = set(changes) - _SITUATION_FIELDS
        if unknown:
            raise TypeError(f"Situation.copy_with got unknown fields {sorted(unknown)}")
        new = copy.copy(self)
        for key, value in changes.items():
            setattr(new, key, value)
        if not isinstance(new.memory, dict):
            raise TypeError("Situation.memory must be a dict")
        new.memory = copy.deepcopy(new.memory)
        new.attributes = copy.deepcopy({} if new.attributes is None else new.attributes)
        new.history = copy.deepcopy([] if new.history is None else new.history)
        if new.instruction is None:
            new.instruction = EmptyInstruction()
        return new
