"""Camera images go through ``magma_core.render.images`` on every path: the run loop's
``--observe images`` (``observation_images``: rendered now, PNG-encoded), the store (the same
bytes) and the exports (``stored_entry``: the entry the agent got, byte for byte).

A real render device is needed for real camera pictures (``tests/rendering`` checks those
where ``make render`` installed one); here, on every machine, the pictures come from
``PaintedCameras``: the real engine, whose ``camera_images`` answers a picture that changes
with each call, so the test can tell which decision's image went where. Without a render
device the command refuses ``--observe images`` in one line (forced off here)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from magma_core.agents import TraceAgent
from magma_core.cli import main
from magma_core.render.images import image_entry, observation_images, stored_entry
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore, StoreReader

pytestmark = pytest.mark.sim
PREFIX = "data:image/png;base64,"


class PaintedCameras:
    """The real engine, with ``camera_images`` answering a 32 x 24 picture whose colour is
    the call's number (one camera, ``overview``)."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self.calls = 0

    def __getattr__(self, name: str):
        return getattr(self._executor, name)

    def camera_images(self, slot: int) -> dict[str, np.ndarray]:
        self.calls += 1
        return {"overview": np.full((24, 32, 3), (self.calls * 40) % 256, np.uint8)}


def test_observation_images_encode_each_camera_in_name_order():
    class Two:
        def camera_images(self, slot):
            return {"wrist": np.zeros((4, 6, 3), np.uint8), "overview": np.ones((8, 8, 3), np.uint8)}

    entries = observation_images(Two(), 0)
    assert [e["camera"] for e in entries] == ["overview", "wrist"]
    wrist = Image.open(io.BytesIO(base64.b64decode(entries[1]["data"])))
    assert wrist.format == "PNG" and wrist.size == (6, 4) == (entries[1]["width"], entries[1]["height"])
    with Executor(load_preset("cube.PickPlace")(), num_slots=1, seed=0) as executor:
        assert observation_images(executor, 0) == []  # a world built without cameras


def test_observed_images_reach_the_store_and_the_export_unchanged(tmp_path):
    task = load_preset("cube.PickPlace")()
    with RunStore(tmp_path / "magma.db") as store:
        store.open_run("vis", "cube.PickPlace", {"preset": "cube.PickPlace", "agent": "trace"})
        with Executor(task, num_slots=1, seed=0) as executor:
            cameras = PaintedCameras(executor)
            RunLoop(task, TraceAgent(task.perfect_trace()), cameras, store, "vis", episodes=1,
                    seed=3, observe_images=True).run()
    stored = StoreReader(tmp_path).images("vis", 0)
    assert [i["decision"] for i in stored] == list(range(1, cameras.calls + 1))
    for k, image in enumerate(stored, start=1):  # the store kept what the encoder made
        painted = np.full((24, 32, 3), (k * 40) % 256, np.uint8)
        assert image["data"] == base64.b64decode(image_entry("overview", painted)["data"])
    assert main(["export", "vis", "--format", "chat-jsonl", "--out", str(tmp_path),
                 "--output", str(tmp_path / "chat"), "--min-score", "0"]) == 0
    rows = [json.loads(line) for f in sorted((tmp_path / "chat").glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]
    urls = [p["image_url"]["url"] for row in rows for m in row["messages"]
            if isinstance(m.get("content"), list) for p in m["content"] if p["type"] == "image_url"]
    expected = {PREFIX + stored_entry(image)["data"] for image in stored}
    assert urls and set(urls) <= expected and len(set(urls)) > 1


def test_without_a_render_device_observe_images_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAGMA_RENDER", "off")
    assert main(["run", "cube.PickPlace", "--observe", "images", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--observe images needs rendering: rendering is off" in err
    assert not (tmp_path / "magma.db").exists()
