"""The viewer's video route and the episode page's links to it: the mp4 is made by the render
package (through ``runs.videos``), over real HTTP on loopback, with the render device forced
off and as this machine has it."""

from __future__ import annotations

import httpx
import pytest

from magma_core.render import render_unavailable
from magma_core.render.frames import HEIGHT, WIDTH
from magma_core.render.video import frame_count, probe_frames
from magma_core.store import StoreReader

pytestmark = pytest.mark.sim
VIDEO = "/api/runs/machine/episodes/0/video"


@pytest.fixture(params=["forced-off", "this-machine"])
def render_state(request, monkeypatch):
    if request.param == "forced-off":
        monkeypatch.setenv("MAGMA_RENDER", "off")
    else:
        monkeypatch.delenv("MAGMA_RENDER", raising=False)
    return render_unavailable()


def _frames(content: bytes, tmp_path) -> tuple[int, tuple[int, int]]:
    path = tmp_path / "got.mp4"
    path.write_bytes(content)
    return probe_frames(path)


def test_the_video_route_serves_the_render_packages_mp4(viewer, live_store, tmp_path, render_state):
    decisions = len(StoreReader(live_store).episode("machine", 0)["record"]["steps"])
    schematic = httpx.get(f"{viewer.url}{VIDEO}?kind=schematic", timeout=120)
    assert schematic.status_code == 200 and schematic.headers["content-type"] == "video/mp4"
    assert schematic.headers["x-magma-video-kind"] == "schematic"
    assert _frames(schematic.content, tmp_path) == (frame_count(decisions), (WIDTH, HEIGHT))
    auto = httpx.get(f"{viewer.url}{VIDEO}?kind=auto", timeout=300)
    assert auto.status_code == 200 and _frames(auto.content, tmp_path)[0] == frame_count(decisions)
    rendered = httpx.get(f"{viewer.url}{VIDEO}?kind=rendered", timeout=300)
    if render_state is None:
        assert auto.headers["x-magma-video-kind"] == "rendered"
        assert "x-magma-video-note" not in auto.headers
        assert rendered.status_code == 200 and rendered.content != schematic.content
    else:  # no device: auto is the schematic and says why; rendered is refused in one line
        assert auto.headers["x-magma-video-kind"] == "schematic"
        assert auto.headers["x-magma-video-note"] == f"schematic videos: {render_state}"
        assert rendered.status_code == 409
        assert rendered.json()["detail"] == f"cannot render videos: {render_state}"
    assert not (live_store / "videos").exists()  # the viewer writes nothing into the folder


def test_the_video_route_refuses_what_it_cannot_serve(viewer):
    bad_kind = httpx.get(f"{viewer.url}{VIDEO}?kind=gif")
    assert bad_kind.status_code == 422 and "unknown video kind 'gif'" in bad_kind.json()["detail"]
    missing = httpx.get(f"{viewer.url}/api/runs/machine/episodes/7/video")
    assert missing.status_code == 404 and "has no episode 7" in missing.json()["detail"]
    assert httpx.get(f"{viewer.url}/api/runs/nope/episodes/0/video").status_code == 404


def test_the_episode_page_links_its_videos(viewer, page):
    page.goto(f"{viewer.url}/#/runs/machine/episodes/0")
    link = page.get_by_test_id("video-schematic")
    link.wait_for(timeout=15_000)
    href = link.get_attribute("href")
    assert href == f"{VIDEO}?kind=schematic"
    assert page.get_by_test_id("video-auto").get_attribute("href") == f"{VIDEO}?kind=auto"
    got = httpx.get(f"{viewer.url}{href}", timeout=120)
    assert got.status_code == 200 and got.headers["content-type"] == "video/mp4"
