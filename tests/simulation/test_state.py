"""Pure-torch batched state operations (no simulator)."""

from __future__ import annotations

import logging

import pytest
import torch

from magma_core.simulation.data_structures import EnvStateUpdate
from magma_core.simulation.state import (
    apply_env_state_updates,
    assign_slot,
    clone_state,
    merge_allowed_moving_actors,
    restore_disallowed_actors,
    select_slot,
    stack_states,
    states_equal,
)


def make_state(n: int = 3) -> dict:
    return {
        "actors": {
            "cube": torch.arange(n * 13, dtype=torch.float32).reshape(n, 13),
            "zone_a": torch.zeros(n, 13),
        },
        "articulations": {"panda": torch.ones(n, 31)},
        "magma_extra_state": {
            "machine_on": torch.zeros(n, dtype=torch.bool),
            "counter": torch.zeros(n, 2, dtype=torch.int64),
            "note": "not a tensor",
        },
    }


def test_import_does_not_pull_the_simulator():
    import subprocess
    import sys

    code = (
        "import sys, magma_core.simulation.state; "
        "sys.exit(int(any(m.split('.')[0] in ('mani_skill', 'sapien') for m in sys.modules)))"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_select_assign_stack_round_trip():
    state = make_state()
    del state["magma_extra_state"]["note"]
    rows = [select_slot(state, i) for i in range(3)]
    assert rows[1]["actors"]["cube"].shape == (1, 13)
    assert states_equal(stack_states(rows), state)
    target = clone_state(state)
    assign_slot(target, 0, rows[2])
    assert torch.equal(target["actors"]["cube"][0], state["actors"]["cube"][2])
    assert torch.equal(target["actors"]["cube"][1], state["actors"]["cube"][1])


def test_update_sets_one_slot_with_leaf_dtype():
    state = make_state()
    out = apply_env_state_updates(
        state, 1, [EnvStateUpdate(("magma_extra_state", "machine_on"), True)]
    )
    assert out is state
    assert state["magma_extra_state"]["machine_on"].tolist() == [False, True, False]
    apply_env_state_updates(
        state, 2, [EnvStateUpdate(("magma_extra_state", "counter"), [3.0, 4.0])]
    )
    assert state["magma_extra_state"]["counter"].dtype == torch.int64
    assert state["magma_extra_state"]["counter"][2].tolist() == [3, 4]


@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("magma_extra_state", "missing"), True, KeyError),
        (("actors", "cube", "x"), 1.0, KeyError),
        (("magma_extra_state", "note"), True, TypeError),
        (("magma_extra_state",), True, TypeError),
        (("actors", "cube"), [1.0, 2.0], ValueError),
        (("magma_extra_state", "machine_on"), object(), TypeError),
    ],
)
def test_update_errors_change_nothing(path, value, error):
    state = make_state()
    before = clone_state(state)
    good = EnvStateUpdate(("magma_extra_state", "machine_on"), True)
    with pytest.raises(error) as info:
        apply_env_state_updates(state, 0, [good, EnvStateUpdate(path, value)])
    if error is KeyError:
        assert repr(path) in str(info.value)
    assert states_equal(state, before)


def test_update_slot_out_of_range():
    state = make_state()
    with pytest.raises(IndexError):
        apply_env_state_updates(state, 3, [EnvStateUpdate(("actors", "cube"), torch.zeros(13))])


def test_merge_allowed_moving_actors():
    assert merge_allowed_moving_actors([["cube"], None, []]) is None
    assert merge_allowed_moving_actors([["cube"], ["zone_a", "cube"], []]) == ["cube", "zone_a"]
    assert merge_allowed_moving_actors([]) == []


def test_restore_disallowed_actors():
    source = make_state()
    state = clone_state(source)
    state["actors"]["cube"] += 100
    state["actors"]["zone_a"] += 100
    restore_disallowed_actors(state, source, 1, None)
    assert torch.equal(state["actors"]["cube"][1], source["actors"]["cube"][1] + 100)

    restore_disallowed_actors(state, source, 1, ["zone_a"])
    assert torch.equal(state["actors"]["cube"][1], source["actors"]["cube"][1])
    assert torch.equal(state["actors"]["cube"][0], source["actors"]["cube"][0] + 100)
    assert torch.equal(state["actors"]["zone_a"][1], source["actors"]["zone_a"][1] + 100)

    snapshot = select_slot(source, 2)
    restore_disallowed_actors(state, snapshot, 2, [], source_slot=0)
    assert torch.equal(state["actors"]["zone_a"][2], source["actors"]["zone_a"][2])


def test_restore_skips_with_warning_on_unknown_name_or_layout(caplog):
    source = make_state()
    state = clone_state(source)
    state["actors"]["cube"] += 1
    moved = clone_state(state)
    with caplog.at_level(logging.WARNING):
        restore_disallowed_actors(state, source, 0, ["cub"])
    assert "unknown actors" in caplog.text
    assert states_equal(state, moved)

    bad_source = clone_state(source)
    bad_source["actors"]["cube"] = torch.zeros(3, 7)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        restore_disallowed_actors(state, bad_source, 0, [])
    assert "does not match" in caplog.text
    assert states_equal(state, moved)
