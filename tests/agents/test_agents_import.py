"""The agent layer never pays for the simulator."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import magma_core.agents, magma_core.judge, magma_core.protocol.agent, magma_core.cli.serve_agent
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("mani_skill", "sapien"))
print(",".join(heavy))
"""


def test_import_agents_does_not_import_the_simulator():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
