"""The coaching section of the generating-data guide: its commands run as shown."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from gen.kill_resume import run

pytestmark = pytest.mark.sim
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "generating-data.md"


def test_the_coaching_commands_of_the_guide_run(tmp_path):
    import sys

    section = GUIDE.read_text().split("## Coaching", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [shlex.split(line) for line in block.strip().splitlines()]
    assert [c[:2] for c in commands] == [["magma", "gen"], ["magma", "export"], ["magma", "export"]]
    outputs = []
    for command in commands:
        argv = [str(tmp_path) if previous == "--out" else a for previous, a in zip(["", *command[:-1]], command, strict=True)]
        done = run([sys.executable, "-m", "magma_core.cli", *argv[1:]], timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    assert re.search(r"coaching: [1-9]\d* corrected", outputs[0])
    assert "preference-jsonl export of coached written" in outputs[1]
