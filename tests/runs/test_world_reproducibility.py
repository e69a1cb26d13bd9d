"""The same ``magma run`` stores bit-identical world states whatever the slots and timing,
and a run resumed after it stopped part-way stores the same worlds as a clean one.

Each record carries ``world_digest`` (SHA-256 of its world states): the digests are
compared across runs and checked against the states actually stored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from magma_core.runs import RunSpec, run
from magma_core.simulation.executor.world import world_digest
from magma_core.store import open_store

pytestmark = pytest.mark.sim


def _digests(folder: Path, name: str, episodes: int) -> list[str]:
    with open_store(folder, create=False) as store:
        out = []
        for k in range(episodes):
            record = store.episode_record(name, k)
            states = store.episode_world(name, k)["states"]
            assert record["world_digest"] == world_digest(states)
            assert len(states) == len(record["steps"]) + 1
            out.append(record["world_digest"])
        return out


@pytest.mark.parametrize("preset, episodes", [("sorting.SortAll", 3), ("cube.PickPlace", 4)])
def test_identical_runs_and_a_resumed_run_store_the_same_worlds(preset, episodes, tmp_path):
    def spec(name: str, slots: int, count: int) -> RunSpec:
        return RunSpec(target=preset, episodes=count, slots=slots, out=tmp_path, name=name,
                       backend="cpu")

    run(spec("one-slot", 1, episodes))  # every episode after another in the same slot
    run(spec("three-slots", 3, episodes))  # side by side, each slot's history its own
    run(spec("resumed", 2, 1))  # a run stopped after its first episode ...
    run(spec("resumed", 2, episodes))  # ... and resumed by a new engine
    clean = _digests(tmp_path, "one-slot", episodes)
    assert len(set(clean)) == episodes  # the episodes differ from each other
    assert _digests(tmp_path, "three-slots", episodes) == clean
    assert _digests(tmp_path, "resumed", episodes) == clean
