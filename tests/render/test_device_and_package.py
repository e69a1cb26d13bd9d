"""``magma_core.render``: importing it costs no simulator, ``MAGMA_RENDER=off`` forces the
device off for the package and for the simulator layer alike, and the video kinds resolve
to what the rendering guide says in both states."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from magma_core.render import device
from magma_core.render.video import VideoError, resolve_kind

RENDER_MODULES = ("magma_core.render", "magma_core.render.device", "magma_core.render.frames",
                  "magma_core.render.video", "magma_core.render.rendered",
                  "magma_core.render.images")


def test_the_render_package_and_a_forced_off_answer_import_no_simulator():
    code = ("import sys\n"
            f"for name in {RENDER_MODULES!r}:\n    __import__(name)\n"
            "from magma_core.render import render_unavailable\n"
            "reason = render_unavailable()\n"
            "heavy = sorted(m for m in ('mani_skill', 'sapien', 'torch') if m in sys.modules)\n"
            "print(reason)\nprint(heavy)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "MAGMA_RENDER": "off"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    reason, heavy = proc.stdout.splitlines()
    assert reason == device.OFF_REASON and heavy == "[]"


@pytest.mark.parametrize("value", ["off", "OFF", " 0 ", "no", "false"])
def test_the_switch_forces_the_device_off_here_and_in_the_simulator_layer(monkeypatch, value):
    from magma_core.simulation.envs import cameras, headless

    monkeypatch.setenv("MAGMA_RENDER", value)
    assert device.forced_off()
    assert device.render_unavailable() == cameras.render_unavailable() == device.OFF_REASON
    assert "\n" not in device.OFF_REASON
    assert headless.backend_kwargs(render=True)["render_backend"] == "none"


@pytest.mark.sim
def test_without_the_switch_the_machine_decides(monkeypatch):
    from magma_core.simulation.envs import cameras

    for value in (None, "", "on", "1"):
        if value is None:
            monkeypatch.delenv("MAGMA_RENDER", raising=False)
        else:
            monkeypatch.setenv("MAGMA_RENDER", value)
        assert not device.forced_off()
        reason = device.render_unavailable()
        assert reason == cameras.render_unavailable()
        assert reason is None or ("\n" not in reason and "make render" in reason)


@pytest.mark.sim
@pytest.mark.parametrize("state", ["forced-off", "this-machine"])
def test_video_kinds_resolve_in_both_states(monkeypatch, state):
    if state == "forced-off":
        monkeypatch.setenv("MAGMA_RENDER", "off")
    else:
        monkeypatch.delenv("MAGMA_RENDER", raising=False)
    reason = device.render_unavailable()
    assert resolve_kind("schematic") == ("schematic", None)
    if reason is None:
        assert resolve_kind("auto") == ("rendered", None)
        assert resolve_kind("rendered") == ("rendered", None)
    else:
        assert resolve_kind("auto") == ("schematic", f"schematic videos: {reason}")
        with pytest.raises(VideoError, match="cannot render videos: "):
            resolve_kind("rendered")
    with pytest.raises(VideoError, match="unknown video kind 'gif'"):
        resolve_kind("gif")
