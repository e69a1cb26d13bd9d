"""The seed's stage contract where it was loose: attribute-edit logs fail every kind of
non-additive stage, and a transition without ``_to_spec_arguments`` runs (only serialising
it fails, saying what to add)."""

from __future__ import annotations

import pytest
import torch

from engine.helpers import act, say
from engine.scenario import AskStage, NoteAreaStage, PlaceCubeStage, make_task
from magma_core.simulation.data_structures import StageSuccess, ToolErrorFlag
from magma_core.simulation.executor import FAILED, SUCCESS
from magma_core.simulation.stage import TextOnlyValidationMode
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition

NOTE = act("note_area", area="zone_c")


class NeverDoneStage(PlaceCubeStage):
    """Overrides ``verify_completion``: the engine, not the stage, must refuse the edit."""

    def verify_completion(self, obs, stage_logs, full_logs):
        return torch.zeros(1, dtype=torch.int8)


STAGE_KINDS = {
    "action": lambda: PlaceCubeStage(),
    "text-only with tools": lambda: AskStage(mode=TextOnlyValidationMode.SAY_ONLY, allow_tools=True),
    "text-only allowing note_area": lambda: AskStage(mode=TextOnlyValidationMode.SAY_ONLY,
                                                     allow_tools=True, allowed_tools=["note_area"]),
    "custom verify_completion": lambda: NeverDoneStage(),
    "log-verified, not additive": lambda: NoteAreaStage(additive=False),
}


@pytest.mark.parametrize("kind", list(STAGE_KINDS))
def test_an_attribute_edit_fails_every_non_additive_stage(fake, kind) -> None:
    executor = fake(make_task([STAGE_KINDS[kind]()])).executor
    out = executor.submit({0: NOTE})[0]
    assert out.calls[0].ok  # the tool worked; the stage refuses its edit
    assert out.stage_success is StageSuccess.FAILED and out.status == FAILED
    assert "not additive" in out.failure_reason and "'zone_c'" in out.failure_reason
    assert executor.agent_view(0).attributes["areas"] == ["zone_a", "zone_b"]  # not applied


def test_an_additive_stage_still_applies_the_edit(fake) -> None:
    executor = fake(make_task([NoteAreaStage(additive=True)])).executor
    out = executor.submit({0: NOTE})[0]
    assert out.status == SUCCESS
    assert executor.record(0).to_dict()["attributes"]["areas"] == ["zone_a", "zone_b", "zone_c"]


def test_a_refused_call_in_a_text_only_stage_is_a_bad_call(fake) -> None:
    executor = fake(make_task([AskStage(mode=TextOnlyValidationMode.SAY_ONLY)])).executor
    out = executor.submit({0: act("detect")})[0]
    assert out.calls[0].failure_flag is ToolErrorFlag.BAD_CALL and not out.calls[0].ok


class NudgeCube(BaseStageEnvironmentTransition):
    """No ``_to_spec_arguments``: runs, cannot be serialised."""

    def __init__(self, x: float) -> None:
        self.x = x

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        env_state["actors"]["cube"][env_ids.to(env_state["actors"]["cube"].device), 0] = self.x
        return env_state


def test_a_transition_without_spec_arguments_runs_and_fails_only_when_serialised(fake) -> None:
    transition = NudgeCube(0.05)  # constructs: _to_spec_arguments is not abstract
    assert "NudgeCube" in repr(transition)
    run = fake(make_task([_stage_with(transition)]))
    assert abs(float(run.cube(0)[0]) - 0.05) < 1e-3  # applied at stage 0's entry
    out = run.executor.submit({0: say("zone A")})[0]
    assert out.status == SUCCESS
    for serialise in (transition.to_spec, _stage_with(transition).to_spec):
        with pytest.raises(NotImplementedError) as caught:
            serialise()
        message = str(caught.value)
        assert "NudgeCube" in message and "def _to_spec_arguments(self) -> dict" in message


class AskAfterNudge(AskStage):
    def __init__(self, transition: BaseStageEnvironmentTransition) -> None:
        super().__init__(mode=TextOnlyValidationMode.SAY_ONLY)
        self.entry_transition = transition

    def _to_spec_arguments(self) -> dict:
        return {"transition": self.entry_transition}


def _stage_with(transition: BaseStageEnvironmentTransition) -> AskStage:
    return AskAfterNudge(transition)
