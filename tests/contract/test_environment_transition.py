"""Entry transitions, starting with the seed's MoveCubeAtEntry on a fake batched state."""

from __future__ import annotations

import json

import pytest
import torch

from contract.scenario_examples import GenericStage, InheritsSpecArguments, MoveCubeAtEntry
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition


def batched_state(n: int = 3) -> dict:
    cube = torch.arange(n * 13, dtype=torch.float32).reshape(n, 13)
    return {
        "actors": {"cube": cube, "bowl": torch.ones(n, 13)},
        "articulations": {"panda": torch.zeros(n, 31)},
        "magma_extra_state": {"machine_on": torch.zeros(n, dtype=torch.bool)},
    }


def test_seed_move_cube_at_entry_changes_only_selected_slots() -> None:
    state, before = batched_state(), batched_state()
    stage = GenericStage(entry_transition=MoveCubeAtEntry(x=0.1))
    out = stage.build_init_state(state, torch.tensor([0, 2]))
    cube = out["actors"]["cube"]
    assert cube[[0, 2], 0].tolist() == pytest.approx([0.1, 0.1])
    assert torch.equal(cube[1], before["actors"]["cube"][1])
    assert torch.equal(cube[:, 1:], before["actors"]["cube"][:, 1:])
    assert cube.shape == (3, 13) and cube.dtype == torch.float32
    assert torch.equal(out["actors"]["bowl"], before["actors"]["bowl"])


def test_transition_round_trip() -> None:
    spec = json.loads(json.dumps(MoveCubeAtEntry(x=0.1).to_spec()))
    assert spec == {"type": f"{MoveCubeAtEntry.__module__}:MoveCubeAtEntry", "arguments": {"x": 0.1}}
    rebuilt = BaseStageEnvironmentTransition.from_spec(spec)
    assert isinstance(rebuilt, MoveCubeAtEntry) and rebuilt.x == 0.1


def test_transition_needs_its_own_spec_arguments() -> None:
    with pytest.raises(NotImplementedError, match="InheritsSpecArguments"):
        InheritsSpecArguments(0.1).to_spec()


def test_transition_from_spec_checks_the_class() -> None:
    spec = MoveCubeAtEntry(0.1).to_spec()
    with pytest.raises(TypeError):
        InheritsSpecArguments.from_spec(spec)


def test_transition_needs_apply_and_spec_arguments_only_to_be_serialised() -> None:
    class OnlyApply(BaseStageEnvironmentTransition):
        def apply(self, env_state, env_ids):
            return env_state

    with pytest.raises(TypeError):
        BaseStageEnvironmentTransition()  # type: ignore[abstract]  # apply is abstract
    transition = OnlyApply()  # constructs and applies; serialising says what to add
    assert transition.apply({"actors": {}}, torch.tensor([0])) == {"actors": {}}
    with pytest.raises(NotImplementedError, match=r"add a method `def _to_spec_arguments"):
        transition.to_spec()
