"""``magma run --observe images``: a loopback OpenAI-compatible server receives each
decision's camera images as ``image_url`` data-URL parts; the store keeps the same PNG bytes
once per decision; ``chat-jsonl`` rows carry them as image parts and the ``hf`` export as an
``Image`` feature. Without a render device the run is refused in one line."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from agents.agent_helpers import FakeOpenAI, completion, tool_call
from magma_core.cli import main
from magma_core.store import StoreReader

from .conftest import require_render

pytestmark = [pytest.mark.sim, pytest.mark.render]
PREFIX = "data:image/png;base64,"


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    require_render()
    server = FakeOpenAI()
    server.script = [completion(tool_calls=[tool_call("pick", {"object": "cube"}, "c1")]),
                     completion(tool_calls=[tool_call("place", {"area": "zone_a"}, "c2")]),
                     completion("The cube is in zone A.")]
    out = tmp_path_factory.mktemp("observe")
    try:
        code = main(["run", "cube.PickPlace", "--agent", f"openai:vlm@{server.base_url}",
                     "--observe", "images", "--episodes", "1", "--out", str(out), "--name", "vis",
                     "--max-decisions", "4"])
        yield code, server.requests, out
    finally:
        server.close()


def _sent_images(body: dict) -> list[str]:
    urls = []
    for message in body["messages"]:
        if isinstance(message.get("content"), list):
            urls += [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
    return urls


def test_the_model_server_receives_each_decisions_images(observed):
    code, requests, _ = observed
    assert code == 0 and len(requests) >= 2
    per_request = [_sent_images(body) for body in requests]
    # each turn carries its own images (overview + wrist), none kept from earlier turns
    assert all(len(urls) == 2 and all(u.startswith(PREFIX) for u in urls) for urls in per_request)
    first = Image.open(io.BytesIO(base64.b64decode(per_request[0][0][len(PREFIX):])))
    assert first.format == "PNG" and first.size == (256, 256)
    assert per_request[0][0] != per_request[1][0]  # the arm moved between the decisions
    last_user = [m for m in requests[0]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"][0]["type"] == "text" and "zone A" in last_user["content"][0]["text"]


def test_the_store_keeps_the_images_once_per_decision(observed):
    _, requests, out = observed
    images = StoreReader(out).images("vis", 0)
    decisions = sorted({i["decision"] for i in images})
    assert decisions == list(range(1, len(requests) + 1))
    assert {i["camera"] for i in images} == {"overview", "wrist"}
    sent = {(k + 1, n): base64.b64decode(url[len(PREFIX):])
            for k, body in enumerate(requests) for n, url in enumerate(_sent_images(body))}
    overview = [i for i in images if i["camera"] == "overview"]
    assert [i["data"] for i in overview] == [sent[(k, 0)] for k in decisions]


def test_exported_rows_carry_the_images(observed, tmp_path):
    _, requests, out = observed
    assert main(["export", "vis", "--format", "chat-jsonl", "--out", str(out),
                 "--output", str(tmp_path / "chat"), "--min-score", "0"]) == 0
    rows = [json.loads(line) for f in sorted((tmp_path / "chat").glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]
    assert rows
    urls = [u for row in rows for m in row["messages"] if isinstance(m.get("content"), list)
            for u in [p["image_url"]["url"] for p in m["content"] if p["type"] == "image_url"]]
    assert urls and all(u.startswith(PREFIX) for u in urls)
    assert main(["export", "vis", "--format", "hf", "--out", str(out),
                 "--output", str(tmp_path / "hf"), "--min-score", "0"]) == 0
    import datasets

    parquet = sorted(str(p) for p in (tmp_path / "hf").rglob("*.parquet"))
    data = datasets.load_dataset("parquet", data_files=parquet, split="train")
    assert isinstance(data.features["images"].feature, datasets.Image)
    shown = [img for row in data for img in row["images"]]
    assert shown and shown[0].size == (256, 256)


def test_without_a_render_device_observe_images_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAGMA_RENDER", "off")
    assert main(["run", "cube.PickPlace", "--observe", "images", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--observe images needs rendering" in err and "MAGMA_RENDER=off" in err
    assert err.count("\n") == 1


def test_the_viewer_shows_each_decisions_frame_beside_the_conversation(observed, request):
    """The API serves the stored frames; Debian's headless Chromium shows them in each turn."""
    import os
    from pathlib import Path

    import httpx

    from view.conftest import ViewerServer

    _, requests, out = observed
    stored = StoreReader(out).images("vis", 0)
    with ViewerServer(out) as server:
        episode = httpx.get(f"{server.url}/api/runs/vis/episodes/0").json()
        assert [(i["decision"], i["camera"]) for i in episode["images"]] == \
            [(i["decision"], i["camera"]) for i in stored]
        png = httpx.get(f"{server.url}/api/runs/vis/episodes/0/images/1/overview")
        assert png.headers["content-type"] == "image/png" and png.content == stored[0]["data"]
        assert httpx.get(f"{server.url}/api/runs/vis/episodes/0/images/99/overview").status_code == 404
        browser = request.getfixturevalue("browser")  # skips, with the reason, without one
        from playwright import sync_api

        page = browser.new_page(viewport={"width": 1440, "height": 960})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/#/runs/vis/episodes/0")
        turns = page.get_by_test_id("turn")
        sync_api.expect(turns).to_have_count(len(requests), timeout=15_000)
        frames = turns.first.get_by_test_id("frame")
        sync_api.expect(frames).to_have_count(2)
        page.wait_for_function("[...document.querySelectorAll('[data-testid=frame]')]"
                               ".every((img) => img.complete && img.naturalWidth > 0)")
        widths = page.eval_on_selector_all("[data-testid=frame]", "els => els.map(e => e.naturalWidth)")
        assert widths[:2] == [256, 128] and len(widths) == 2 * len(requests)
        shots = os.environ.get("MAGMA_SCREENSHOTS")
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / "viewer-rendered.png"))
        page.close()
        assert errors == []
