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


def test_reused_scenes_are_an_option_kept_with_the_run(tmp_path):
    """``--reuse-scenes`` (``fresh_scenes=False``) reaches the simulator and the run's config;
    its episodes still succeed, and the first episode of a slot (nothing ran before it) stores
    the world a fresh-scene run stores."""
    from magma_core.cli import build_parser
    from magma_core.cli.run import spec_from_args
    from magma_core.runs.assembly import open_executor
    from magma_core.scenarios import load_preset

    args = build_parser().parse_args(["run", "cube.PickPlace", "--reuse-scenes"])
    assert spec_from_args(args).fresh_scenes is False
    assert spec_from_args(build_parser().parse_args(["run", "cube.PickPlace"])).fresh_scenes is True
    with open_executor(load_preset("cube.PickPlace")(), 1, 0, None, "cpu", fresh_scene=False) as ex:
        assert ex.sim.fresh_scene is False
    for name, fresh in (("fresh", True), ("reused", False)):
        result = run(RunSpec(target="cube.PickPlace", episodes=2, out=tmp_path, name=name,
                             backend="cpu", fresh_scenes=fresh))
        assert [s.status for s in result.summaries] == ["success", "success"]
    with open_store(tmp_path, create=False) as store:
        assert store.get_run("reused")["config"]["fresh_scenes"] is False
        assert "fresh_scenes" not in store.get_run("fresh")["config"]
    assert _digests(tmp_path, "reused", 2)[0] == _digests(tmp_path, "fresh", 2)[0]
