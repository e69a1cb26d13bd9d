"""The contract imports without the simulator."""

from __future__ import annotations

import subprocess
import sys

CONTRACT_MODULES = [
    "magma_core",
    "magma_core.serialization",
    "magma_core.simulation.data_structures",
    "magma_core.simulation.errors",
    "magma_core.simulation.goals",
    "magma_core.simulation.stage",
    "magma_core.simulation.stage.environment_transition",
    "magma_core.simulation.tools",
]

PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mani_skill", "sapien"))
print(",".join(loaded))
"""


def test_contract_does_not_import_the_simulator() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *CONTRACT_MODULES],
        capture_output=True, text=True, check=True, timeout=120,
    )
    assert out.stdout.strip() == ""


def test_public_names() -> None:
    import magma_core.simulation.stage as stage
    import magma_core.simulation.tools as tools

    assert {"BaseTaskStage", "CompletionAnswerStage", "StageGlobalParameters",
            "StageErrorParameters", "TextOnlyValidationMode", "BaseStageComposite"} <= set(dir(stage))
    assert {"BaseToolsAPI", "register_tool"} <= set(dir(tools))
