"""The LeRobot bridge against the real library (opt-in: ``make test-bridge-lerobot``, in a venv
of its own): a run on the real simulator recorded with ``--record-control``, exported with
``magma export --format lerobot`` (the installed entry point), loaded with LeRobot's own
``LeRobotDataset`` from the local folder (no hub) and iterated in batches by a torch
``DataLoader``. Without a render device (forced off here) the dataset has no camera feature
and says why; with one, every frame has the render camera's picture."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

if importlib.util.find_spec("lerobot") is None:
    pytest.skip("LeRobot is not installed: make test-bridge-lerobot", allow_module_level=True)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local dataset: never the hub (read at import)

lerobot_dataset = pytest.importorskip(
    "lerobot.datasets.lerobot_dataset", reason="LeRobot is not installed: make test-bridge-lerobot")
torch = pytest.importorskip("torch")

from magma_core.cli import main  # noqa: E402
from magma_core.export import available_formats  # noqa: E402
from magma_core.render import render_unavailable, reset_probe  # noqa: E402
from magma_core.runs import RunSpec, run  # noqa: E402
from magma_core.store.reader import StoreReader  # noqa: E402

pytestmark = [pytest.mark.bridges, pytest.mark.sim]

PRESET = "cube.PickPlace"
IMAGE_KEY = "observation.images.render_camera"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run of 3 trace episodes with control steps, on the real simulator."""
    out = tmp_path_factory.mktemp("lerobot-run")
    result = run(RunSpec(target=PRESET, agent="trace", episodes=3, slots=2, out=out, name="rc",
                         record_control=True))
    assert result.ok
    return out


def _export(out, folder, capsys) -> tuple:
    code = main(["export", "rc", "--out", str(out), "--format", "lerobot", "--output", str(folder),
                 "--validation-ratio", "0.34"])
    assert code == 0
    err = capsys.readouterr().err
    root = folder / "lerobot"
    return root, err, lerobot_dataset.LeRobotDataset("magma/rc", root=root)


def test_the_export_loads_in_lerobot_and_iterates_in_batches(recorded, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MAGMA_RENDER", "off")
    assert "lerobot" in available_formats()  # found through the magma.export entry point
    root, err, dataset = _export(recorded, tmp_path / "export", capsys)
    assert "no camera frames in the dataset: rendering is off" in err
    reader = StoreReader(recorded)
    controls = [reader.control("rc", e) for e in range(3)]
    lengths = [sum(len(c["steps"]) for c in control) for control in controls]
    assert dataset.num_episodes == 3 and dataset.num_frames == sum(lengths) and dataset.fps == 20
    assert IMAGE_KEY not in dataset.features and dataset.meta.camera_keys == []
    info = json.loads((root / "meta/info.json").read_text())
    assert info["magma"]["images"]["camera"] is None and info["splits"] == {"train": "0:2", "validation": "2:3"}
    # episode order: train episodes, then validation; each row says which stored episode it is
    order = [int(s.split(":e")[1]) for s in info["magma"]["episodes"]]
    assert sorted(order) == [0, 1, 2]
    first = controls[order[0]]
    item = dataset[0]
    assert item["task"] == "Put the cube in zone A." and item["subtask"] == "Put the cube in zone A."
    assert item["observation.state"].dtype == torch.float32 and item["observation.state"].shape == (9,)
    assert torch.allclose(item["observation.state"], torch.tensor(first[0]["steps"][0]["qpos"]["panda"]))
    assert torch.allclose(item["action"], torch.tensor(first[0]["steps"][0]["action"]["panda"]))
    last = dataset[lengths[order[0]] - 1]
    assert int(last["frame_index"]) == lengths[order[0]] - 1 and int(last["decision_index"]) == 2
    assert torch.allclose(last["observation.state"], torch.tensor(first[-1]["steps"][-1]["qpos"]["panda"]))
    episodes = dataset.meta.episodes
    assert [episodes[i]["length"] for i in range(3)] == [lengths[e] for e in order]
    segments = episodes[0]["magma/segments"]
    assert [(s["instruction"], s["success"], s["state"]) for s in segments] == [
        ("Put the cube in zone A.", "FINISH", "OPTIMAL"),
        ("Clearly inform the user that the mission is complete.", "FINISH", "OPTIMAL")]
    assert segments[0]["to_frame"] == lengths[order[0]] == segments[1]["from_frame"] == segments[1]["to_frame"]
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    batch = next(iter(loader))
    assert batch["observation.state"].shape == (32, 9) and batch["action"].shape == (32, 8)
    assert batch["episode_index"].shape == (32,) and len(batch["task"]) == 32
    assert set(batch["action"][:, -1].tolist()) <= {1.0, -1.0}
    seen = sum(len(b["index"]) for b in loader)
    assert seen == dataset.num_frames


def test_with_a_render_device_every_frame_has_the_camera_picture(recorded, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MAGMA_RENDER", raising=False)
    reset_probe()
    reason = render_unavailable()
    if reason is not None:
        pytest.skip(f"no render device here: {reason}")
    root, err, dataset = _export(recorded, tmp_path / "export", capsys)
    assert "no camera frames" not in err
    assert dataset.meta.camera_keys == [IMAGE_KEY]
    item = dataset[0]
    assert item[IMAGE_KEY].shape == (3, 256, 256) and item[IMAGE_KEY].dtype == torch.float32
    assert 0.0 <= float(item[IMAGE_KEY].min()) and float(item[IMAGE_KEY].max()) <= 1.0
    assert float(item[IMAGE_KEY].std()) > 0.01  # a picture, not a blank
    far = dataset[int(dataset.meta.episodes[0]["length"]) - 1]
    assert not torch.equal(item[IMAGE_KEY], far[IMAGE_KEY])  # the arm moved between them
    batch = next(iter(torch.utils.data.DataLoader(dataset, batch_size=8)))
    assert batch[IMAGE_KEY].shape == (8, 3, 256, 256)


def test_a_generations_kept_paths_load_as_episodes(tmp_path, monkeypatch, capsys):
    from magma_core.gen import GenSpec, generate

    monkeypatch.setenv("MAGMA_RENDER", "off")
    generate(GenSpec(PRESET, agent="noisy-trace", branches=2, max_nodes=12, slots=2, out=tmp_path,
                     name="g", record_control=True))
    code = main(["export", "g", "--out", str(tmp_path), "--format", "lerobot", "--validation-ratio", "0"])
    assert code == 0
    root = tmp_path / "exports" / "g-lerobot" / "lerobot"
    dataset = lerobot_dataset.LeRobotDataset("magma/g", root=root)
    control = StoreReader(tmp_path).candidate_control("g")
    assert dataset.num_episodes >= 2
    assert dataset.num_frames == sum(int(dataset.meta.episodes[i]["length"]) for i in range(dataset.num_episodes))
    for index in range(dataset.num_episodes):
        meta = dataset.meta.episodes[index]
        last = int(meta["magma/source"].rsplit(":c", 1)[1])
        assert meta["magma/status"] == "success" and last not in control  # the closing answer moved nothing
        assert [s["success"] for s in meta["magma/segments"]] == ["FINISH", "FINISH"]
        assert meta["length"] > 60  # a pick and a place at the control rate
    batch = next(iter(torch.utils.data.DataLoader(dataset, batch_size=16)))
    assert batch["observation.state"].shape == (16, 9) and batch["task"][0] == "Put the cube in zone A."
