"""Without a render device the rendering tests skip with the one-line reason: checked in a
fresh pytest process on a machine that has no Vulkan driver (``VK_ICD_FILENAMES`` pointing
at nothing, as on a stock CI box) and with ``MAGMA_RENDER=off``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim
HERE = Path(__file__).parent


@pytest.mark.parametrize(("env", "reason"), [
    ({"VK_ICD_FILENAMES": "/nonexistent/icd.json"}, "no render device (SAPIEN: "),
    ({"MAGMA_RENDER": "off"}, "rendering is off (MAGMA_RENDER=off)"),
])
def test_render_tests_skip_with_the_reason(env, reason):
    inherited = {k: v for k, v in os.environ.items() if k != "MAGMA_RENDER"}  # .ci/run sets it
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:randomly",
         str(HERE / "test_camera_pixels.py")],
        cwd=HERE.parents[1], env={**inherited, **env, "PYTHONWARNINGS": "ignore"},
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skips = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 2 and all(reason in line for line in skips), proc.stdout
    assert "2 skipped" in proc.stdout and "passed" not in proc.stdout
