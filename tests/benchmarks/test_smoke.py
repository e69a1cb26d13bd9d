"""Every script under ``benchmarks/`` runs with a bare ``--smoke`` (no other argument), so a
broken one fails CI.

The scripts run in this process (``runpy``, as ``__main__``) so the simulator is imported once
for all of them; each must finish without an exception (exit status 0), print figures, and
take under a minute. Scripts that need a real model, Ray or the training extras skip that part
in their smoke setting themselves.
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
#: Modules that are helpers of other scripts, not scripts (no ``__main__``).
HELPERS = {"local_model_server.py", "real_model_measure.py", "learning_arms.py", "learning_report.py",
           "learning_options.py"}
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name not in HELPERS)


def test_every_script_is_covered() -> None:
    """A new script gets a smoke setting (and is run below) or is named a helper."""
    assert len(SCRIPTS) >= 13
    for name in SCRIPTS:
        assert "--smoke" in (BENCHMARKS / name).read_text(), f"{name} has no --smoke setting"


@pytest.mark.sim
@pytest.mark.parametrize("name", SCRIPTS)
def test_script_runs_in_its_smoke_setting(name: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", [str(BENCHMARKS / name), "--smoke"])  # bare: nothing else
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    try:
        runpy.run_path(str(BENCHMARKS / name), run_name="__main__")
    except SystemExit as exc:  # scripts that return a status
        assert exc.code in (0, None), f"{name} exited with {exc.code}"
    wall_s = time.perf_counter() - started
    assert capsys.readouterr().out.strip(), f"{name} printed nothing"
    # the bar is a minute; a loaded CI machine gets twice that before the test calls it slow
    assert wall_s < 120, f"{name} --smoke took {wall_s:.0f} s (the bar is under a minute)"


def test_helper_module_imports() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        module = runpy.run_path(str(BENCHMARKS / "local_model_server.py"))
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert callable(module["server_python"])


def test_gpu_check_stops_at_once_without_cuda(tmp_path: Path) -> None:
    """Where ``nvidia-smi`` finds no GPU, the GPU check says so in one line (exit status 3)
    before it installs anything."""
    import os
    import subprocess

    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "GPU_CHECK_VENV": str(tmp_path / "venv")}
    result = subprocess.run(["bash", str(BENCHMARKS / "gpu_check.sh")], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 3
    assert result.stderr.startswith("gpu_check: no CUDA device") and result.stderr.count("\n") == 1
    assert not (tmp_path / "venv").exists()
