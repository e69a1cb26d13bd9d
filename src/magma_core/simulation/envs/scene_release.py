"""Releasing the PhysX scenes a ``SimBatch`` rebuilds: bounded memory over any number of episodes.

A CPU slot that starts an episode in a fresh scene (``SimBatch(fresh_scene=True)``) drops its
old ManiSkill scene. The scene's Python objects refer to each other, so reference counting
does not free them: only the cyclic garbage collector does, and with its old objects frozen
(``gc.freeze``, once per process) and the scene's objects long promoted, its next full pass
may come dozens of scenes later. Each dropped scene holds its native PhysX memory until then:
a run's resident memory climbed by about 1 MB per episode for 100 episodes before a full pass
gave some of it back (issue 38).

:class:`SceneRelease` bounds that: after ``limit`` dropped scenes (a batch's slot count) it
runs one full collection. With the loaded libraries frozen that pass walks only the objects
made since (a few thousand: 1 to 10 ms, measured, against 0.1 s for a scene build); the first
``SceneRelease`` of a process freezes them when nothing is frozen yet (see
:func:`freeze_loaded_objects`).
"""

from __future__ import annotations

import gc


def freeze_loaded_objects() -> None:
    """Once per process (while nothing is frozen): move the objects alive now (the imported
    libraries, mostly) out of the garbage collector's way (``gc.freeze``), so that a full
    collection walks only what was made since. Later calls do nothing: freezing again would
    pin for good whatever earlier work left for the collector."""
    if gc.get_freeze_count() == 0:
        gc.freeze()


class SceneRelease:
    """Counts the scenes dropped by rebuilds and collects them every ``limit`` of them, so
    that at most ``limit`` dropped scenes are alive at any time."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self.pending = 0  # scenes dropped since the last collection
        self.collections = 0
        freeze_loaded_objects()

    def dropped(self, scenes: int = 1) -> None:
        """``scenes`` more scenes were dropped; collect them once ``limit`` are waiting."""
        self.pending += scenes
        if self.pending >= self.limit:
            self.collect()

    def collect(self) -> None:
        """One full collection now (the dropped scenes and their native memory go)."""
        gc.collect()
        self.pending = 0
        self.collections += 1
