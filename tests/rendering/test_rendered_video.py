"""Rendered episode videos: ``magma runs video --kind rendered`` draws the stored world states
through the world's camera, a picture per decision and ``--motion-frames`` pictures of the
motion between them; with ``MAGMA_RENDER=off`` the same commands say why in one line."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from magma_core.cli import main
from magma_core.render import reset_probe
from magma_core.render.frames import HEIGHT, WIDTH
from magma_core.render.video import (
    END_HOLD,
    HOLD,
    START_HOLD,
    ffmpeg_exe,
    frame_count,
    probe_frames,
)
from magma_core.store.reader import StoreReader

from .conftest import require_render

pytestmark = [pytest.mark.sim, pytest.mark.render]
MOTION = 3


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rendered")
    assert main(["run", "cube.PickPlace", "--episodes", "1", "--out", str(out), "--name", "pp"]) == 0
    return out


def _decode(path) -> np.ndarray:
    raw = subprocess.run([ffmpeg_exe(), "-loglevel", "error", "-i", str(path), "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, HEIGHT, WIDTH, 3)


def test_rendered_video_frames_follow_the_arm(stored_run, tmp_path, capsys):
    require_render()
    output = tmp_path / "pp.mp4"
    assert main(["runs", "video", "pp", "--episode", "0", "--out", str(stored_run), "--output",
                 str(output), "--kind", "rendered", "--motion-frames", str(MOTION)]) == 0
    decisions = len(StoreReader(stored_run).episode("pp", 0)["record"]["steps"])
    assert decisions >= 2
    count, size = probe_frames(output)
    assert count == frame_count(decisions, MOTION) and size == (WIDTH, HEIGHT)
    frames = _decode(output).astype(np.int16)
    picture = frames[:, : HEIGHT - 168]  # above the footer
    start = picture[START_HOLD - 1]
    first_motion = picture[START_HOLD]
    after_first = picture[START_HOLD + MOTION]
    last = picture[-1]
    # the arm moves: the start, the motion and the states after decisions all differ
    for a, b in ((start, first_motion), (first_motion, after_first), (after_first, last)):
        assert np.abs(a - b).mean() > 0.3
    # held states are still (up to the encoder's noise)
    assert np.abs(picture[START_HOLD + MOTION] - picture[START_HOLD + MOTION + HOLD - 1]).mean() < 0.3
    assert count - (START_HOLD + decisions * (MOTION + HOLD)) == END_HOLD
    # a rendered picture is not the schematic's flat background
    assert len(np.unique(start.reshape(-1, 3), axis=0)) > 500


def test_without_a_render_device_the_commands_say_why(stored_run, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MAGMA_RENDER", "off")
    reset_probe()
    assert main(["runs", "video", "pp", "--episode", "0", "--out", str(stored_run), "--output",
                 str(tmp_path / "r.mp4"), "--kind", "rendered"]) == 2
    err = capsys.readouterr().err
    assert "MAGMA_RENDER=off" in err and err.count("\n") == 1
    assert not (tmp_path / "r.mp4").exists()
    # auto falls back to the schematic, saying why
    assert main(["runs", "video", "pp", "--episode", "0", "--out", str(stored_run), "--output",
                 str(tmp_path / "a.mp4"), "--motion-frames", "2"]) == 0
    assert "schematic videos: rendering is off" in capsys.readouterr().err.replace("\n", " ")
    decisions = len(StoreReader(stored_run).episode("pp", 0)["record"]["steps"])
    assert probe_frames(tmp_path / "a.mp4")[0] == frame_count(decisions, 2)
