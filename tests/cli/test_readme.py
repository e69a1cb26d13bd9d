"""The README's scenario-package tutorial is the test fixture, file for file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "my_magma_scenarios"
BLOCK = re.compile(r"```(?:python|toml|yaml)\n# file: (?P<path>\S+)\n(?P<body>.*?)\n```", re.S)
TEST_ONLY = '"Buggy"'  # the fixture's manifest also lists a broken preset for the tests


def test_every_tutorial_file_is_the_fixture_file():
    blocks = {m["path"]: m["body"] for m in BLOCK.finditer((ROOT / "README.md").read_text())}
    assert set(blocks) == {
        "src/my_magma_scenarios/scenarios/cube_transitions.py",
        "src/my_magma_scenarios/scenarios/tools.py",
        "src/my_magma_scenarios/scenarios/stages.py",
        "src/my_magma_scenarios/scenarios/presets.py",
        "src/my_magma_scenarios/scenarios/definitions.py",
        "src/my_magma_scenarios/scenarios/randomization.yaml",
        "src/my_magma_scenarios/manifest.py",
        "pyproject.toml",
    }
    for path, body in blocks.items():
        lines = [line for line in (FIXTURE / path).read_text().rstrip("\n").splitlines()
                 if TEST_ONLY not in line]
        assert body.splitlines() == lines, f"README's {path} differs from the fixture"


def test_the_quick_start_commands_exist():
    makefile = (ROOT / "Makefile").read_text()
    readme = (ROOT / "README.md").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in readme and f"\n{target}:" in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text()
