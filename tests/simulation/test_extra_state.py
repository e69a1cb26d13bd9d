"""EnvStateUpdate on the real cube world: the machine turns on in one slot only."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.data_structures import EnvStateUpdate
from magma_core.simulation.state import apply_env_state_updates, states_equal

pytestmark = pytest.mark.sim

MACHINE_ON = ("magma_extra_state", "machine_on")


def test_machine_on_in_one_slot(batch3):
    state = batch3.get_state()
    apply_env_state_updates(state, 2, [EnvStateUpdate(path=MACHINE_ON, value=True)])
    batch3.set_state(state, slots=[2])
    assert batch3.get_state()["magma_extra_state"]["machine_on"].tolist() == [False, False, True]
    assert batch3.observe()["extra"]["machine_on"].tolist() == [False, False, True]
    batch3.reset(seed=0)
    assert not batch3.observe()["extra"]["machine_on"].any()


@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("magma_extra_state", "machine_off"), True, KeyError),
        (("magma_extra_state",), True, TypeError),
        (("actors", "cube"), [0.1, 0.2], ValueError),
    ],
)
def test_error_cases_change_nothing(batch3, path, value, error):
    state = batch3.get_state()
    before = batch3.get_state()
    with pytest.raises(error):
        apply_env_state_updates(
            state, 1, [EnvStateUpdate(MACHINE_ON, True), EnvStateUpdate(path, value)]
        )
    assert states_equal(state, before)
    batch3.set_state(state)
    assert not batch3.observe()["extra"]["machine_on"].any()


def test_extra_state_survives_snapshots(batch3):
    state = batch3.get_state()
    apply_env_state_updates(state, 0, [EnvStateUpdate(MACHINE_ON, torch.tensor(True))])
    batch3.set_state(state, slots=[0])
    snapshot = batch3.save_slot(0)
    batch3.reset(seed=0)
    batch3.restore_slot(1, snapshot)
    assert batch3.observe()["extra"]["machine_on"].tolist() == [False, True, False]
