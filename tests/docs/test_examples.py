"""Every example script the guides include runs and its own checks pass.

The guides show these files' code inline, checked equal to them (``test_guides.py``), so
what a reader sees is what runs here. Each script runs in its own process, as a reader would run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: The scenario package is installed and run by tests/cli/test_scenario_package.py.
PACKAGE = EXAMPLES / "my_magma_scenarios"


#: Examples that train a real model: run by their opt-in target (``make test-rl``), not here.
OPT_IN = ("rl/train_grpo_smollm2.py", "training/train_sft.py", "training/serve_chat.py",
          "training/train_grpo.py")


def example_scripts(*, opt_in: bool = False) -> list[Path]:
    """The runnable examples: files with a ``__main__`` guard, outside the package (with
    ``opt_in``, also those only an opt-in target runs)."""
    return sorted(
        p for p in EXAMPLES.rglob("*.py")
        if PACKAGE not in p.parents and 'if __name__ == "__main__":' in p.read_text()
        and (opt_in or p.relative_to(EXAMPLES).as_posix() not in OPT_IN)
    )


def test_the_examples_are_found():
    names = {p.relative_to(EXAMPLES).as_posix() for p in example_scripts()}
    assert {"state/entry_transition.py", "state/tool_state_update.py"} <= names


@pytest.mark.sim
@pytest.mark.parametrize("script", example_scripts(), ids=lambda p: p.relative_to(EXAMPLES).as_posix())
def test_example_runs(script: Path, tmp_path: Path):
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(PACKAGE / "src"), os.environ.get("PYTHONPATH", "")])},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip(), "an example prints what it shows"
