"""``magma gen --record-control`` on the real simulator: each executed candidate that moved
keeps its control steps, the same generation with 1 or 2 slots records the same steps, and
the kept paths export as LeRobot episodes whose segments carry the stages' verdicts."""

from __future__ import annotations

import json

import pytest

from magma_core.export import ExportSettings, load_forest
from magma_core.export import writers as export_writers
from magma_core.gen import GenSpec, generate
from magma_core.integrations.lerobot import exporter as lerobot_exporter
from magma_core.store.reader import StoreReader
from magma_core.user_error import UserError

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


def _generate(out, slots: int, record: bool = True):
    generate(GenSpec(PRESET, agent="noisy-trace", branches=2, max_nodes=12, slots=slots, out=out,
                     name="g", record_control=record))
    return StoreReader(out)


def test_each_candidate_that_moved_keeps_its_steps_whatever_the_slots(tmp_path):
    one = _generate(tmp_path / "one", 1)
    two = _generate(tmp_path / "two", 2)
    assert one.get_generation("g")["config"]["record_control"] is True
    control = one.candidate_control("g")
    candidates = one.candidates("g")
    moved = {c.id for c in candidates if any(call["ok"] and call["tool"] in ("pick", "place")
                                             for call in (c.execution or {}).get("calls") or [])}
    assert moved and set(control) == moved  # every candidate that moved the arm, and only those
    for steps in control.values():
        assert steps["rate"] == 20.0 and len(steps["steps"]) > 30
        assert not any(s.get("restored") for s in steps["steps"])  # each starts at its situation
    assert two.candidate_control("g") == control  # the same steps with 2 slots as with 1


def test_without_the_flag_nothing_is_recorded_and_ray_refuses_it(tmp_path):
    reader = _generate(tmp_path, 2, record=False)
    assert reader.candidate_control("g") == {} and "record_control" not in reader.get_generation("g")["config"]
    from magma_core.runs.ray_cluster import RayCluster

    with pytest.raises(UserError, match="--record-control does not apply with Ray"):
        GenSpec(PRESET, record_control=True, ray=RayCluster())


def test_kept_paths_export_as_lerobot_episodes(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    monkeypatch.setenv("MAGMA_RENDER", "off")
    real = export_writers.get_exporter
    monkeypatch.setattr(export_writers, "get_exporter",
                        lambda name: lerobot_exporter.lerobot() if name == "lerobot" else real(name))
    reader = _generate(tmp_path, 2)
    forest = load_forest(tmp_path / "magma.db", "g")
    report = export_writers.write_export(forest, ExportSettings(format="lerobot", validation_ratio=0),
                                         tmp_path / "out")
    kept, _ = forest.selected(ExportSettings().min_score)
    paths = list(forest.kept_paths(kept))
    assert report.rows["train"] == len(paths) > 0
    import pyarrow.parquet as pq

    root = tmp_path / "out" / "lerobot"
    episodes = pq.read_table(root / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    control = reader.candidate_control("g")
    for path, episode in zip(paths, episodes, strict=True):
        ids = [int(c.key.rsplit(":c", 1)[1]) for _, c in path]
        assert episode["magma/source"] == path[-1][1].key
        assert episode["length"] == sum(len(control[i]["steps"]) for i in ids if i in control)
        assert episode["tasks"] == ["Put the cube in zone A."]
        segments = episode["magma/segments"]
        assert segments[0]["instruction"] == "Put the cube in zone A." and segments[0]["to_frame"] == episode["length"]
        assert segments[-1]["instruction"] == "Clearly inform the user that the mission is complete."
        assert segments[-1]["success"] == "FINISH"
    info = json.loads((root / "meta/info.json").read_text())
    assert info["total_episodes"] == len(paths) and info["fps"] == 20


def test_a_generation_is_resumed_recorded_as_it_began(tmp_path):
    _generate(tmp_path, 2, record=False)
    with pytest.raises(UserError, match="grown without --record-control"):
        generate(GenSpec(PRESET, agent="noisy-trace", branches=2, max_nodes=16, slots=2, out=tmp_path,
                         name="g", record_control=True))
