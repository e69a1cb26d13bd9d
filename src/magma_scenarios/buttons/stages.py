"""Goals, stages and the entry transition of the buttons scenario.

Goals read the world's extra state from ``obs["extra"]``: ``lights`` and ``press_count``
(``[N, 4]``, button order :data:`~magma_scenarios.buttons.world.BUTTONS`) and
``press_order`` (``[N, MAX_PRESSES]``, -1 when empty).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from magma_core.simulation.data_structures import EmptyInstruction, StageInput, UserInstruction
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import And, BaseGoal
from magma_core.simulation.stage import BaseTaskStage, StageErrorParameters
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_scenarios.buttons.world import BUTTONS, button_index


def _check_button(name: object) -> str:
    if name not in BUTTONS:
        raise ValueError(f"unknown button {name!r}; buttons: {', '.join(BUTTONS)}")
    return name


class LightOn(BaseGoal):
    """1 where the light of ``button`` is on, else 0."""

    def __init__(self, button: str) -> None:
        self.button = _check_button(button)

    def verify(self, obs: dict) -> torch.Tensor:
        return obs["extra"]["lights"][:, button_index(self.button)].to(torch.int64)


class LightOff(BaseGoal):
    """1 where the light of ``button`` is off, else 0."""

    def __init__(self, button: str) -> None:
        self.button = _check_button(button)

    def verify(self, obs: dict) -> torch.Tensor:
        return (~obs["extra"]["lights"][:, button_index(self.button)].bool()).to(torch.int64)


class NeverPressed(BaseGoal):
    """1 while ``button`` has never been pressed this episode; -1 (failed for good) after."""

    def __init__(self, button: str) -> None:
        self.button = _check_button(button)

    def verify(self, obs: dict) -> torch.Tensor:
        pressed = obs["extra"]["press_count"][:, button_index(self.button)] > 0
        return torch.where(pressed, -1, 1).to(torch.int64)


class PressedInOrder(BaseGoal):
    """The presses of the episode, from press number ``start`` on, spell ``sequence``: 1 when
    they do exactly, 0 while they are a strict prefix of it, -1 once they diverge."""

    def __init__(self, sequence: Sequence[str], start: int = 0) -> None:
        self.sequence = [_check_button(b) for b in sequence]
        if not self.sequence:
            raise ValueError("PressedInOrder needs at least one button")
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"start must be an int >= 0, got {start!r}")
        self.start = start

    def verify(self, obs: dict) -> torch.Tensor:
        order = obs["extra"]["press_order"]
        want = [button_index(b) for b in self.sequence]
        scores = []
        for row in order.tolist():
            done = [i for i in row if i >= 0][self.start :]
            if done == want:
                scores.append(1)
            elif done == want[: len(done)]:
                scores.append(0)
            else:
                scores.append(-1)
        return torch.tensor(scores, dtype=torch.int64)


class LightOffAtEntry(BaseStageEnvironmentTransition):
    """Before the stage, the light of ``button`` goes off (a power cut, someone else)."""

    def __init__(self, button: str) -> None:
        self.button = _check_button(button)

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        lights = env_state["magma_extra_state"]["lights"]
        lights[env_ids.to(lights.device), button_index(self.button)] = False
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"button": self.button}


class ButtonsStage(BaseTaskStage):
    """An action stage at the panel: ``goals`` reached in ``presses`` presses (the target;
    the maximum is twice that). ``instruction=None`` continues the previous request.
    ``errors`` are injected errors (each one's failed press is forgiven)."""

    def __init__(
        self,
        goals: list[BaseGoal],
        description: str,
        instruction: str | None,
        presses: int,
        flag_answer_to_user: bool = False,
        entry_transition: BaseStageEnvironmentTransition | None = None,
        errors: list[BaseError] | None = None,
    ) -> None:
        errors = list(errors or [])
        self.target_tool_calls = presses
        self.max_tool_calls = 2 * presses
        self.instruction_text = instruction
        text = EmptyInstruction() if instruction is None else UserInstruction(instruction)
        super().__init__(
            goals=[And(goals)] if len(goals) > 1 else list(goals),
            stage_goal_description=description,
            stage_input=StageInput(text, flag_answer_to_user),
            entry_transition=entry_transition,
            error_parameters=StageErrorParameters(errors, len(errors), len(errors)),
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        goals = self.goals[0].goal_list if isinstance(self.goals[0], And) else self.goals
        return {
            "goals": list(goals),
            "description": self.stage_goal_description,
            "instruction": self.instruction_text,
            "presses": self.target_tool_calls,
            "flag_answer_to_user": self.stage_input.flag_answer_to_user,
            "entry_transition": self.entry_transition,
            "errors": list(self.error_parameters.possible_errors),
        }
