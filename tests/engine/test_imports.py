"""The engine's logic and the tasks import without the simulator (it loads on demand)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import magma_core.simulation.executor, magma_core.simulation.tasks
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("mani_skill", "sapien"))))
"""


def test_executor_and_tasks_import_without_the_simulator() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
