"""A generation is a function of its command and seeds (DESIGN.md): the same ``magma gen`` with
1 or 4 slots, and with an agent whose answers come back in a shuffled order, stores the same
trees field by field (situations, candidates, snapshots) and exports the same bytes.

On the real simulator: ``sorting.LongSorting`` (a definition: each tree its own task) with the
noisy trace agent, the case where five identical runs once gave 175 to 180 situations."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
import zlib
from pathlib import Path

import pytest

from gen.kill_resume import gen_command, run
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.gen.assembly import prepare_generation
from magma_core.runs.agent_requests import Pacing

pytestmark = [pytest.mark.sim, pytest.mark.timing]

TARGET = "sorting.LongSorting"


def _shuffle_answers(agent, seed: int) -> None:
    """Make ``agent`` answer after a random delay, so concurrent requests come back out of
    the order they were asked in (the delays are drawn anew on every run)."""
    decide, rng, lock = agent.decide, random.Random(seed), threading.Lock()

    def late_decide(*args, **kwargs):
        with lock:
            delay = rng.uniform(0.0, 0.03)
        time.sleep(delay)
        return decide(*args, **kwargs)

    agent.decide = late_decide


def _grow(folder: Path, slots: int, *, shuffled: bool = False, fresh_scene: bool = True) -> dict:
    from magma_core.runs.assembly import open_executor

    parts = prepare_generation(TARGET, "noisy-trace:0.3", seed=3, trees=2)
    pacing = None
    if shuffled:
        _shuffle_answers(parts.agent, seed=slots)
        pacing = Pacing(concurrency=4)
    store = GenerationStore(folder / "magma.db")
    store.open_generation("g", TARGET, {})
    executor = open_executor(parts.task, slots, 3, None, "cpu", fresh_scene=fresh_scene)
    try:
        settings = GenSettings(branches=2, max_nodes=40, trees=2, seed=3, max_per_stage=2)
        Generator(parts.task, parts.agent, executor, store, "g", settings, trees=parts.trees,
                  pacing=pacing).run()
        return _tree_of(store)
    finally:
        executor.close()
        store.close()


def _tree_of(store: GenerationStore) -> dict:
    """Everything the store holds of generation ``g``, as plain data (timings left out)."""
    situations = [dataclasses.asdict(s) for s in store.situations("g")]
    candidates = []
    for c in store.candidates("g"):
        row = dataclasses.asdict(c)
        for step in row["internal_steps"]:
            step.pop("latency_s", None)
        if row["execution"]:
            row["execution"].pop("timings", None)
        candidates.append(row)
    snapshots = {s["id"]: store.snapshot_blob("g", s["id"]) for s in situations}
    return {"trees": store.trees("g"), "situations": situations, "candidates": candidates,
            "snapshots": snapshots}


def _assert_same(a: dict, b: dict, *, worlds: bool = True) -> None:
    """The same trees field by field; with ``worlds=False`` the snapshots' world states (the
    simulator's floats) are left out of the comparison, everything else in them compared."""
    assert len(a["situations"]) == len(b["situations"])
    assert len(a["candidates"]) == len(b["candidates"])
    assert a["trees"] == b["trees"]
    for x, y in zip(a["situations"], b["situations"], strict=True):
        assert x == y, f"situation {x['id']} differs"
    for x, y in zip(a["candidates"], b["candidates"], strict=True):
        assert x == y, f"candidate {x['id']} differs"
    for sid, blob in a["snapshots"].items():
        if worlds:
            assert blob == b["snapshots"][sid], f"situation {sid}'s snapshot differs"
        else:
            x, y = (json.loads(zlib.decompress(s)) for s in (blob, b["snapshots"][sid]))
            x.pop("world"), y.pop("world")
            assert x == y, f"situation {sid}'s snapshot differs beyond its world state"


def test_one_or_four_slots_store_the_same_trees(tmp_path):
    """Every record and every snapshot byte: each candidate is restored into a freshly built
    scene, so PhysX's contact caches (in no state) cannot carry a slot's past into it."""
    one = _grow(tmp_path / "one", 1)
    assert len(one["candidates"]) == 40
    assert {c["status"] for c in one["candidates"]} - {"finished", "ongoing"}, "no branch ended"
    _assert_same(one, _grow(tmp_path / "four", 4))


def test_a_reused_scene_carries_the_slots_past_into_the_physics(tmp_path):
    """The control: restored into a scene that keeps its caches (``fresh_scene=False``), the
    world states drift with the slot count; every other record stays the same."""
    one = _grow(tmp_path / "one", 1, fresh_scene=False)
    four = _grow(tmp_path / "four", 4, fresh_scene=False)
    _assert_same(one, four, worlds=False)
    assert any(one["snapshots"][sid] != four["snapshots"][sid] for sid in one["snapshots"])


def test_answers_in_a_shuffled_order_store_the_same_bytes(tmp_path):
    """With the same slot count, the order in which answers come back changes no byte."""
    _assert_same(_grow(tmp_path / "ordered", 3), _grow(tmp_path / "shuffled", 3, shuffled=True))


def test_the_same_gen_command_with_1_and_4_slots_exports_the_same_bytes(tmp_path):
    exports = []
    for slots in ("1", "4"):
        folder = tmp_path / f"s{slots}"
        command = gen_command(folder, TARGET, 30)
        command[command.index("--slots") + 1] = slots
        done = run(command)
        assert done.returncode == 0, done.stderr
        out = folder / "export"
        done = run([command[0], "-m", "magma_core.cli", "export", "k", "--out", str(folder),
                    "--output", str(out)])
        assert done.returncode == 0, done.stderr
        exports.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert exports[0].keys() == exports[1].keys() and exports[0]
    for name, data in exports[0].items():
        assert data == exports[1][name], f"{name} differs between --slots 1 and --slots 4"
