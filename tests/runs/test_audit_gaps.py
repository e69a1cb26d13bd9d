"""Behaviours a mutation audit found unchecked: preset details, defaults, dtype conversion."""

from __future__ import annotations

import pytest
import torch

from magma_core.scenarios import load_preset
from magma_core.simulation.data_structures import EnvStateUpdate
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import At
from magma_core.simulation.state import apply_env_state_updates


def test_cube_detection_tool_is_declared_as_one():
    from magma_scenarios.cube.tools import CubeTools
    from magma_scenarios.sorting.tools import SortingTools

    assert CubeTools.detection_tool_names() == ["detect_objects"]
    assert SortingTools.detection_tool_names() == ["detect_objects"]


def test_at_default_threshold_is_ten_centimetres():
    obs = {"extra": {"cube": torch.tensor([[0.09, 0, 0, 1, 0, 0, 0], [0.11, 0, 0, 1, 0, 0, 0]]),
                     "zone": torch.tensor([[0.0, 0, 0, 1, 0, 0, 0]] * 2)}}
    assert At("cube", "zone").verify(obs).tolist() == [1, 0]


def test_state_updates_keep_the_leafs_dtype():
    state = {"magma_extra_state": {"machine_on": torch.zeros(2, dtype=torch.bool),
                                   "level": torch.zeros(2, dtype=torch.int64)}}
    apply_env_state_updates(state, 1, [EnvStateUpdate(("magma_extra_state", "machine_on"), 1.0),
                                       EnvStateUpdate(("magma_extra_state", "level"), 3.0)])
    extra = state["magma_extra_state"]
    assert extra["machine_on"].dtype == torch.bool and extra["machine_on"].tolist() == [False, True]
    assert extra["level"].dtype == torch.int64 and extra["level"].tolist() == [0, 3]


@pytest.mark.sim
def test_machine_preset_resets_the_world_after_its_first_stage():
    task = load_preset("cube.Machine")()
    [switch, *_] = task.perfect_trace().decisions()
    with Executor(task, num_slots=1, seed=0) as executor:
        outcome = executor.submit({0: switch})[0]
        assert outcome.calls[0].ok and outcome.stage_success.name == "FINISH"
        state = executor.sim.get_state()
        assert not bool(state["magma_extra_state"]["machine_on"][0])  # reset_at_end
        assert executor.agent_view(0).stage_index == 1
