"""Helpers for running the real ``magma`` command as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MAGMA = [sys.executable, "-m", "magma_core.cli"]


def magma(*args: str, cwd: Path, timeout: float = 240, stdin: str | None = None,
          env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``magma ARGS`` and return the finished process (text output)."""
    return subprocess.run(
        [*MAGMA, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
