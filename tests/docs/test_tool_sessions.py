"""The ``magma test-tools`` sessions shown in the guides run and finish their task.

A session is a ``text`` block whose first line is ``$ magma test-tools ARGS`` followed by
``magma> COMMAND`` lines; it is replayed through the real command, the guide's example
package installed as a reader would install it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cli.conftest import magma

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
SESSION = re.compile(r"```text\n\$ magma test-tools (?P<args>[^\n]+)\n(?P<body>(?:magma> [^\n]*\n)+)```")


def sessions() -> list[tuple[str, list[str], list[str]]]:
    out = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for m in SESSION.finditer(page.read_text()):
            commands = [line.removeprefix("magma> ") for line in m["body"].splitlines()]
            out.append((page.stem, shlex.split(m["args"]), commands))
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT / "examples" / "my_magma_scenarios")],
        check=True, capture_output=True, text=True, cwd=tmp_path_factory.mktemp("build"),
    )
    return {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


def test_the_guides_show_sessions():
    assert {page for page, _, _ in sessions()} >= {"first-scenario", "tools"}


@pytest.mark.parametrize("page,args,commands", sessions(),
                         ids=[f"{p}:{a[0]}" for p, a, _ in sessions()])
def test_session_finishes_its_task(page, args, commands, installed, tmp_path):
    proc = magma("test-tools", *args, cwd=tmp_path, env=installed,
                 stdin="\n".join(commands) + "\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "finished task: success" in proc.stdout, proc.stdout
