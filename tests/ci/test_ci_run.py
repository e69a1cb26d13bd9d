"""``.ci/run``: ``make test``, then the render-off pass and the loaded ``timing`` pass; the
script fails when any pass fails, counts "no test selected" (pytest's exit 5) as a pass for
the marker pass, and always stops the two busy processes it started.

The real script runs with ``make`` and the Python it calls replaced by small shell scripts
(the suite itself is not run twice inside the suite): each records what it was asked and
exits with the status the test chose."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "run"

STUB_PYTHON = """#!/bin/sh
if [ "$MAGMA_RENDER" = off ]; then pass=render; else pass=timing; fi
echo "$pass $*" >> "$LOG"
if [ "$pass" = timing ]; then  # the script's other children now: the busy processes
    ps -o pid= --ppid "$PPID" | tr -d ' ' | grep -v "^$$\\$" > "$BUSY"
    exit "$TIMING_EXIT"
fi
exit "$RENDER_EXIT"
"""


def _stub(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _run(tmp_path: Path, make: int, render: int, timing: int) -> tuple[subprocess.CompletedProcess, list[str], list[int]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stub(bin_dir / "make", f'#!/bin/sh\necho "make $*" >> "$LOG"\nexit {make}\n')
    python = _stub(tmp_path / "python", STUB_PYTHON)
    log, busy = tmp_path / "log", tmp_path / "busy"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "MAGMA_CI_PYTHON": str(python),
           "LOG": str(log), "BUSY": str(busy), "RENDER_EXIT": str(render),
           "TIMING_EXIT": str(timing)}
    env.pop("MAGMA_RENDER", None)
    proc = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    pids = [int(p) for p in busy.read_text().split()] if busy.exists() else []
    return proc, log.read_text().splitlines(), pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.parametrize(("make", "render", "timing", "ok"), [
    (0, 0, 0, True),
    (0, 0, 5, True),   # no test marked timing: nothing to run is not a failure
    (2, 0, 0, False),
    (0, 1, 0, False),
    (0, 0, 1, False),
])
def test_every_pass_runs_and_any_failure_fails_the_script(tmp_path, make, render, timing, ok):
    proc, log, busy = _run(tmp_path, make, render, timing)
    assert (proc.returncode == 0) is ok, proc.stdout + proc.stderr
    assert log[0] == "make test"
    assert log[1].startswith("render -m pytest") and "tests/render" in log[1] and "tests/view" in log[1]
    assert log[2].startswith("timing -m pytest") and "-m timing" in log[2]
    assert len(busy) == 2  # two busy processes beside the timing pass ...
    assert not any(_alive(pid) for pid in busy)  # ... and none left behind
    if not ok:
        assert "FAILED:" in proc.stderr
