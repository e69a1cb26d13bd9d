"""The warehouse's action stage: boxes end in slots, by a deadline counted in tool calls."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from magma_core.simulation.data_structures import EmptyInstruction, StageInput, UserInstruction
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import And, BaseGoal
from magma_core.simulation.goals.positional import inside
from magma_core.simulation.stage import BaseTaskStage, StageErrorParameters
from magma_scenarios.warehouse.world import HANDOVERS, SLOT_THRESH

#: A placement to this name means "in either hand-over slot".
ANY_HANDOVER = "handover"
RESTING_Z = 0.035  # a 4 cm box's centre below this rests on the table


class InSlot(BaseGoal):
    """1 where ``box`` rests in one of ``slots`` (within ``SLOT_THRESH`` of its centre, on
    the table: a box held over a slot is not in it), else 0."""

    def __init__(self, box: str, slots: list[str]) -> None:
        if not slots:
            raise ValueError("InSlot needs at least one slot")
        self.box, self.slots = box, list(slots)

    def verify(self, obs: dict) -> torch.Tensor:
        hits = torch.stack([inside(obs, self.box, slot, SLOT_THRESH) for slot in self.slots]).any(dim=0)
        resting = obs["extra"][self.box][:, 2].to(hits.device) < RESTING_Z
        return (hits & resting).to(torch.int64)


def slots_for(target: str) -> list[str]:
    """The slots a placement to ``target`` accepts."""
    return list(HANDOVERS) if target == ANY_HANDOVER else [target]


class Deliver(BaseTaskStage):
    """Every box of ``placements`` ends in its slot (``"handover"``: either hand-over slot).

    Optimal: ``calls`` tool calls plus ``extra_calls`` (a ``clear_jam`` after an injected
    jam). ``deadline`` (tool calls, at least ``calls``) is the most the stage may take, plus
    the extra calls; without one the stage may take twice its target. ``instruction=None``
    continues the previous request.
    """

    def __init__(
        self,
        placements: Mapping[str, str],
        instruction: str | None,
        calls: int,
        deadline: int | None = None,
        flag_answer_to_user: bool = False,
        *,
        errors: list[BaseError] | None = None,
        extra_calls: int = 0,
    ) -> None:
        if not placements:
            raise ValueError("Deliver needs at least one placement")
        if deadline is not None and deadline < calls:
            raise ValueError(f"a deadline of {deadline} tool calls is shorter than the {calls} needed")
        self.placements = dict(placements)
        self.instruction_text = instruction
        self.calls, self.deadline, self.extra_calls = calls, deadline, extra_calls
        self.target_tool_calls = calls + extra_calls
        self.max_tool_calls = (2 * calls if deadline is None else deadline) + extra_calls
        goals = [InSlot(box, slots_for(slot)) for box, slot in self.placements.items()]
        described = ", ".join(f"{b} in {s}" for b, s in self.placements.items())
        text = EmptyInstruction() if instruction is None else UserInstruction(instruction)
        errors = list(errors or [])
        super().__init__(
            goals=[And(goals)] if len(goals) > 1 else goals,
            stage_goal_description=f"In the warehouse: {described}.",
            stage_input=StageInput(text, flag_answer_to_user),
            error_parameters=StageErrorParameters(errors, len(errors), len(errors)),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "placements": self.placements,
            "instruction": self.instruction_text,
            "calls": self.calls,
            "deadline": self.deadline,
            "flag_answer_to_user": self.stage_input.flag_answer_to_user,
            "errors": list(self.error_parameters.possible_errors),
            "extra_calls": self.extra_calls,
        }
