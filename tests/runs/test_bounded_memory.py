"""A run holds what is in flight, not what is done (issue 38): the objects alive when its last
episode ends are the same for N and 4N episodes of the real simulator."""

from __future__ import annotations

import collections
import gc

import pytest

from magma_core.runs import RunSpec, run

pytestmark = pytest.mark.sim


SCENE = "mani_skill.envs.scene.ManiSkillScene"


def _by_type() -> collections.Counter:
    return collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


def _alive_at_last_end(tmp_path, episodes: int) -> tuple[int, collections.Counter]:
    """When the run's last episode ends: the ManiSkill scenes alive (beyond those alive before
    the run) with the automatic collector off all along (so a scene the engine dropped and did not release is counted),
    and the objects alive (by type) once the collector has run (what the run keeps),
    EpisodeSummary excepted (``run`` returns them)."""
    seen: dict[str, collections.Counter] = {}
    ended = [0]

    def listener(event, episode, payload):
        if event == "end":
            ended[0] += 1
            if ended[0] == episodes:
                seen["scenes"] = _by_type()[SCENE]
                gc.collect()
                seen["kept"] = _by_type()

    gc.collect()
    before = _by_type()[SCENE]  # scenes other tests of this process still hold: not this run's
    gc.disable()
    try:
        result = run(RunSpec("cube.PickPlace", episodes=episodes, slots=1, out=tmp_path,
                             name=f"n{episodes}", backend="cpu"), listener)
    finally:
        gc.enable()
    assert [s.status for s in result.summaries] == ["success"] * episodes
    kept = seen["kept"]
    for name in ("magma_core.store.run_store.EpisodeSummary", "collections.Counter"):  # ours
        kept.pop(name, None)
    return seen["scenes"] - before, kept


def test_retained_objects_do_not_grow_with_episodes(tmp_path):
    """1 slot: its scene and at most 1 dropped one awaiting release, at 3 episodes as
    at 12; and no type of object kept grows with the episodes (a list of finished episodes'
    records, a cache without a bound, a display that keeps every line would)."""
    _alive_at_last_end(tmp_path, 2)  # first-run caches (imports, lru caches) filled before
    scenes_small, small = _alive_at_last_end(tmp_path, 3)
    scenes_large, large = _alive_at_last_end(tmp_path, 12)
    assert scenes_small <= 2 and scenes_large <= 2, (scenes_small, scenes_large)
    # sqlite3 keeps a weak reference per cursor and drops the dead ones every 200 cursors
    slack = {"weakref.ReferenceType": 200}
    grown = {name: (small[name], n) for name, n in large.items()
             if n > small[name] + slack.get(name, 0)}
    assert not grown, f"types kept at the end that grew with the episodes (3, 12): {grown}"
