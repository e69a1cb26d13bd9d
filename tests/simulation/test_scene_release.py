"""The scenes a fresh-scene ``SimBatch`` drops are released as it goes (issue 38): memory stays
bounded over any number of episodes, not only when the collector's next full pass comes."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

from magma_core.simulation.envs.scene_release import SceneRelease


def test_scene_release_collects_every_limit_drops(monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    release = SceneRelease(3)
    for _ in range(7):
        release.dropped()
    assert (release.collections, release.pending, len(calls)) == (2, 1, 2)
    release.dropped(2)
    assert (release.collections, release.pending) == (3, 0)
    assert gc.get_freeze_count() > 0  # the first one froze what was loaded
    with pytest.raises(ValueError):
        SceneRelease(0)


@pytest.mark.sim
def test_rebuilt_scenes_do_not_pile_up():
    """With the automatic collector off (its next full pass may be dozens of scenes away),
    ten rebuilds of two slots leave only the two current scenes alive; without the release
    all twenty would be (each holding its PhysX memory)."""
    import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
    from magma_core.simulation.envs import SimBatch

    with SimBatch("MagmaCube-v1", 2, seed=0, backend="cpu") as batch:
        scenes = []
        gc.disable()
        try:
            for k in range(10):
                batch.step(torch.zeros(2, 8))  # a slot that stepped starts in a fresh scene
                batch.reset(seed=k)
                scenes += [weakref.ref(env.unwrapped.scene) for env in batch._envs]
            alive = {id(s()) for s in scenes if s() is not None}
        finally:
            gc.enable()
        assert len(alive) <= 2 + batch.scene_release.limit
        assert batch.scene_release.collections >= 9
