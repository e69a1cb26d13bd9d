"""The LeRobot bridge without LeRobot (``make test``): MAGMA episodes -> frames, tasks and
language segments; the v3.0 layout as written (read back with pyarrow and pandas); the
exporter plug-in through ``write_export`` on a real SQLite store; its entry point. LeRobot's
own loader is the opt-in test in ``lerobot/`` (make test-bridge-lerobot)."""

from __future__ import annotations

import json
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

from magma_core.export import ExportSettings, load_forest
from magma_core.export import writers as export_writers
from magma_core.integrations.lerobot import exporter as lerobot_exporter
from magma_core.integrations.lerobot.layout import (
    DATA_FILE,
    EPISODES_FILE,
    IMAGE_KEY,
    write_dataset,
)
from magma_core.integrations.lerobot.mapping import (
    feature_names,
    map_episode,
    recovery_decisions,
    task_text,
)
from magma_core.store import EpisodeRows, EpisodeSummary, open_store
from magma_core.store.control_steps import pack_control

ROOT = Path(__file__).resolve().parents[2]
JOINTS = {"left": ["a1", "a2", "f"], "right": ["b1", "f"]}


def _step(stage: int, user: str | None, calls: list[bool]) -> dict:
    inputs = [{"kind": "user", "content": user}] if user else [{"kind": "env", "content": "{}"}]
    return {"stage_index": stage, "inputs": inputs, "calls": [{"tool": "t", "ok": ok} for ok in calls]}


def _record() -> dict:
    """Three stages: a move whose first try fails and is retried (a recovery), a text answer,
    a second move; the engine's closing stage is never reached."""
    return {
        "task": "demo.Task", "status": "failed", "robot_names": ["left", "right"],
        "steps": [_step(0, "Stack the cubes.", [False]), _step(0, None, [True]),
                  _step(1, "Say what you did.", []), _step(2, "Now the ball.", [True])],
        "stages": [
            {"index": 0, "name": "Stack", "description": "cubes stacked", "started": True,
             "success": "FINISH", "state": "ACCEPTABLE"},
            {"index": 1, "name": "Answer", "description": "an answer", "started": True,
             "success": "FINISH", "state": "OPTIMAL"},
            {"index": 2, "name": "Ball", "description": "ball moved", "started": True,
             "success": "FAILED", "state": None},
            {"index": 3, "name": "Completion", "description": "done", "started": False},
        ],
    }


def _steps(n: int, base: float, restored_first: bool = False) -> list[dict]:
    out = []
    for k in range(n):
        step = {"qpos": {"left": [base + k, 0.5, 0.04], "right": [-base - k, 0.02]},
                "action": {"left": [base + k + 0.1, 0.5, 1.0], "right": [-base, -1.0]},
                "world": {"actors": {"cube": [k / 10, 0, 0, 1, 0, 0, 0]}, "articulations": {}}}
        if restored_first and k == 0:
            step["restored"] = True
        out.append(step)
    return out


def _control() -> list[dict]:
    """Decision 1 (the failed try) took 3 steps, decision 2 (the recovery) 4, decision 4 2
    (the first after a restore); the text answer (3) took none."""
    return [{"decision": d, "rate": 20.0, "joints": JOINTS, "steps": steps}
            for d, steps in ((2, _steps(4, 10.0)), (1, _steps(3, 0.0)), (4, _steps(2, 20.0, True)))]


def test_frames_are_control_steps_in_decision_order_with_state_and_action_per_robot():
    mapped = map_episode(_record(), _control())
    frames = mapped["frames"]
    assert len(frames) == 9 and mapped["rate"] == 20.0
    assert [f["decision"] for f in frames] == [1, 1, 1, 2, 2, 2, 2, 4, 4]
    assert [f["stage"] for f in frames] == [0, 0, 0, 0, 0, 0, 0, 2, 2]
    assert frames[0]["state"] == [0.0, 0.5, 0.04, -0.0, 0.02]  # left's joints, then right's
    assert frames[3]["action"] == [10.1, 0.5, 1.0, -10.0, -1.0]
    assert [f["recovery"] for f in frames] == [False] * 3 + [True] * 4 + [False] * 2
    assert [f["restored"] for f in frames] == [False] * 7 + [True, False]
    assert frames[4]["world"]["actors"]["cube"][0] == pytest.approx(0.1)
    assert mapped["names"]["state"] == ["left.a1", "left.a2", "left.f", "right.b1", "right.f"]
    assert mapped["names"]["action"] == ["left.arm_target_0", "left.arm_target_1", "left.gripper",
                                         "right.arm_target_0", "right.gripper"]


def test_the_task_is_the_user_instructions_and_each_stage_a_segment_with_its_verdict():
    record = _record()
    assert task_text(record) == "Stack the cubes. Say what you did. Now the ball."
    segments = map_episode(record, _control())["segments"]
    assert [(s["stage"], s["instruction"], s["from_frame"], s["to_frame"]) for s in segments] == [
        (0, "Stack the cubes.", 0, 7),
        (1, "Say what you did.", 7, 7),  # a text answer moves nothing: an empty segment
        (2, "Now the ball.", 7, 9),
    ]  # the closing stage never started: no segment
    assert [(s["success"], s["state"]) for s in segments] == [
        ("FINISH", "ACCEPTABLE"), ("FINISH", "OPTIMAL"), ("FAILED", "")]
    assert segments[0]["decisions"] == [1, 2] and segments[0]["recoveries"] == [2]
    assert segments[2]["recoveries"] == []


def test_recoveries_follow_a_failed_call_of_the_same_stage_or_a_coach():
    record = _record()
    assert recovery_decisions(record) == {2}
    assert recovery_decisions(record, {4: "recovery", 3: "coached"}) == {2, 4}
    record["steps"][0]["calls"] = [{"tool": "t", "ok": True}]
    assert recovery_decisions(record) == set()
    no_user = {"task": "x.Y", "steps": [_step(0, None, [True])], "stages": []}
    assert task_text(no_user) == "x.Y"


def test_feature_names_name_every_joint_and_each_arm_target_then_the_gripper():
    state, action = feature_names({"p": ["j1", "j2"]}, {"p": 3})
    assert state == ["p.j1", "p.j2"] and action == ["p.arm_target_0", "p.arm_target_1", "p.gripper"]


def _episode(key: str, task: str) -> dict:
    return {"id": key, **map_episode({**_record(), "steps": [
        _step(0, task, [False]), *_record()["steps"][1:]]}, _control())}


def test_the_layout_is_lerobot_v3_with_indices_splits_tasks_and_segments(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pd = pytest.importorskip("pandas")
    episodes = [_episode("r:e0", "Stack the cubes."), _episode("r:e1", "Stack them, please.")]
    names = episodes[0]["names"]
    written = write_dataset(tmp_path, episodes, fps=20, state_names=names["state"],
                            action_names=names["action"], splits={"train": 1, "validation": 1},
                            robot_type="left+right", magma_info={"images": {"camera": None}})
    assert {str(p.relative_to(tmp_path)) for p in written} == {
        DATA_FILE, EPISODES_FILE, "meta/tasks.parquet", "meta/subtasks.parquet", "meta/info.json",
        "meta/stats.json"}
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (2, 18, 2)
    assert info["splits"] == {"train": "0:1", "validation": "1:2"}
    assert info["features"]["observation.state"] == {"dtype": "float32", "shape": [5], "names": names["state"]}
    assert IMAGE_KEY not in info["features"] and info["video_path"] is None
    assert info["data_path"].format(chunk_index=0, file_index=0) == DATA_FILE
    data = pq.read_table(tmp_path / DATA_FILE).to_pylist()
    assert [r["index"] for r in data] == list(range(18))
    assert [r["frame_index"] for r in data[:9]] == list(range(9)) == [r["frame_index"] for r in data[9:]]
    assert [r["episode_index"] for r in data] == [0] * 9 + [1] * 9
    assert [r["task_index"] for r in data] == [0] * 9 + [1] * 9
    assert data[10]["timestamp"] == pytest.approx(1 / 20)
    assert data[3]["observation.state"] == pytest.approx([10.0, 0.5, 0.04, -10.0, 0.02])
    assert [r["recovery"] for r in data[:9]] == [False] * 3 + [True] * 4 + [False] * 2
    rest = " Say what you did. Now the ball."
    tasks = pd.read_parquet(tmp_path / "meta/tasks.parquet")
    assert tasks.loc["Stack them, please." + rest, "task_index"] == 1
    assert tasks.iloc[0].name == "Stack the cubes." + rest
    subtasks = pd.read_parquet(tmp_path / "meta/subtasks.parquet")
    assert subtasks.iloc[data[8]["subtask_index"]].name == "Now the ball."
    assert subtasks.iloc[data[9]["subtask_index"]].name == "Stack them, please."
    meta = pq.read_table(tmp_path / EPISODES_FILE).to_pylist()
    assert [(m["dataset_from_index"], m["dataset_to_index"], m["length"]) for m in meta] == [(0, 9, 9), (9, 18, 9)]
    assert meta[1]["tasks"] == ["Stack them, please." + rest] and meta[0]["magma/source"] == "r:e0"
    assert [s["to_frame"] for s in meta[0]["magma/segments"]] == [7, 7, 9]
    stats = json.loads((tmp_path / "meta/stats.json").read_text())
    assert stats["observation.state"]["max"][0] == 21.0 and stats["action"]["count"] == [18]


def test_camera_frames_are_image_features_when_a_picture_is_given(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    episodes = [_episode("r:e0", "Stack the cubes.")]
    names = episodes[0]["names"]
    seen = []

    def picture(episode, frame):
        seen.append(frame["decision"])
        return b"\x89PNG" + bytes([len(seen)])

    write_dataset(tmp_path, episodes, fps=20, state_names=names["state"], action_names=names["action"],
                  splits={"train": 1}, frame_image=picture, image_size=(64, 48))
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["features"][IMAGE_KEY]["shape"] == [64, 48, 3] and info["features"][IMAGE_KEY]["dtype"] == "image"
    images = pq.read_table(tmp_path / DATA_FILE).column(IMAGE_KEY).to_pylist()
    assert len(images) == 9 and images[2]["bytes"] == b"\x89PNG\x03" and seen == [1, 1, 1, 2, 2, 2, 2, 4, 4]


def _summary(episode: int, status: str = "success") -> EpisodeSummary:
    return EpisodeSummary(episode=episode, seed=episode, status=status, stages_total=1, stages_passed=1,
                          optimal=1, acceptable=0, exceeded=0, tool_calls=1, decisions=2, wall_s=0.1)


def _store(folder: Path) -> None:
    """A real store: run ``rc`` recorded with control steps (episode 1 took none), run
    ``plain`` without."""
    record = {**_record(), "seed": 0, "env_id": "MagmaCube-v1"}
    with open_store(folder) as store:
        store.open_run("rc", "cube.PickPlace", {"preset": "cube.PickPlace", "agent": "trace",
                                               "record_control": True})
        for episode in (0, 2):
            rows = EpisodeRows(control=tuple(pack_control(c["decision"], c["rate"], c["joints"], c["steps"])
                                             for c in _control()))
            store.save_episode("rc", _summary(episode), record, rows)
        store.save_episode("rc", _summary(1, "error"), record)
        store.open_run("plain", "cube.PickPlace", {"preset": "cube.PickPlace", "agent": "trace"})
        store.save_episode("plain", _summary(0), record)


@pytest.fixture
def lerobot_format(monkeypatch):
    """``--format lerobot`` as the installed entry point gives it (in a checkout whose
    metadata predates the entry point, too)."""
    real = export_writers.get_exporter
    monkeypatch.setattr(export_writers, "get_exporter",
                        lambda name: lerobot_exporter.lerobot() if name == "lerobot" else real(name))
    monkeypatch.setenv("MAGMA_RENDER", "off")


def test_write_export_makes_a_dataset_of_the_recorded_episodes_and_says_what_it_left_out(tmp_path, lerobot_format):
    pytest.importorskip("pyarrow")
    _store(tmp_path)
    forest = load_forest(tmp_path / "magma.db", "rc")
    report = export_writers.write_export(forest, ExportSettings(format="lerobot", validation_ratio=0.5),
                                         tmp_path / "out")
    assert report.rows == {"train": 1, "validation": 1} and not report.skipped
    assert any("episode 1 of run rc took no control steps" in w for w in report.warnings)
    assert any("no camera frames in the dataset: rendering is off" in w for w in report.warnings)
    root = tmp_path / "out" / "lerobot"
    info = json.loads((root / "meta/info.json").read_text())
    assert info["magma"]["images"]["camera"] is None and "MAGMA_RENDER=off" in info["magma"]["images"]["reason"]
    assert info["total_frames"] == 18 and info["robot_type"] == "left+right"
    assert sorted(info["magma"]["episodes"][:1] + info["magma"]["episodes"][1:]) == ["rc:e0", "rc:e2"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["exporter"] == "lerobot" and "lerobot/meta/info.json" in manifest["files"]
    again = export_writers.write_export(forest, ExportSettings(format="lerobot", validation_ratio=0.5),
                                        tmp_path / "out")
    assert again.skipped  # unchanged sources and settings, intact files


def test_a_run_without_control_steps_exports_nothing_and_says_how_to_record(tmp_path, lerobot_format):
    _store(tmp_path)
    report = export_writers.write_export(load_forest(tmp_path / "magma.db", "plain"),
                                         ExportSettings(format="lerobot"), tmp_path / "out")
    assert report.rows == {"train": 0, "validation": 0} and report.files == {}
    assert any("run plain was made without --record-control" in w for w in report.warnings)
    assert any("magma run (or gen) --record-control" in w for w in report.warnings)


def test_the_exporter_is_registered_as_an_entry_point_and_not_imported_by_the_export_layer():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["magma.export"]["lerobot"]
    module, attribute = target.split(":")
    exporter = getattr(import_module(module), attribute)()
    assert exporter.name == "lerobot" and exporter.write is not None
    assert {"pyarrow", "pandas"} <= {d.split(">")[0] for d in project["project"]["optional-dependencies"]["lerobot"]}
    assert "lerobot" not in sys.modules  # the library itself is never needed to write


def test_with_a_render_device_each_frame_is_rendered_from_its_stored_world(tmp_path, lerobot_format, monkeypatch):
    """The rendering path's plumbing, with the camera replaced (no device, no simulator here):
    the episode's world is rebuilt from its run, every frame's stored world is rendered once,
    the picture lands in its row and the cameras are closed."""
    pq = pytest.importorskip("pyarrow.parquet")
    import types

    calls: list = []

    class FakeCameras:
        def __init__(self, height: int, width: int) -> None:
            calls.append(("size", height, width))

        def png(self, world, state) -> bytes:
            calls.append(("png", world[0], state["actors"]["cube"][0]))
            return b"\x89PNG" + bytes([len(calls)])

        def close(self) -> None:
            calls.append(("close",))

    fake = types.ModuleType("magma_core.integrations.lerobot.camera")
    fake.FrameCameras = FakeCameras
    monkeypatch.setitem(sys.modules, "magma_core.integrations.lerobot.camera", fake)
    monkeypatch.setattr(lerobot_exporter, "_images",
                        lambda: {"camera": "render_camera", "height": 8, "width": 6})
    _store(tmp_path)
    report = export_writers.write_export(load_forest(tmp_path / "magma.db", "rc"),
                                         ExportSettings(format="lerobot", validation_ratio=0), tmp_path / "out")
    assert not any("no camera frames" in w for w in report.warnings)
    root = tmp_path / "out" / "lerobot"
    info = json.loads((root / "meta/info.json").read_text())
    assert info["features"][IMAGE_KEY]["shape"] == [8, 6, 3] and info["magma"]["images"]["camera"] == "render_camera"
    pngs = [c for c in calls if c[0] == "png"]
    assert calls[0] == ("size", 8, 6) and calls[-1] == ("close",) and len(pngs) == 18
    assert {c[1] for c in pngs} == {"MagmaCube-v1"}  # the run's world, rebuilt from its config
    assert [c[2] for c in pngs[:3]] == pytest.approx([0.0, 0.1, 0.2])  # each frame's own world
    images = pq.read_table(root / DATA_FILE).column(IMAGE_KEY).to_pylist()
    assert [i["bytes"][-1] for i in images[:3]] == [2, 3, 4]
