"""The README's quick start and its links into the documentation hold."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_start_commands_exist():
    makefile = (ROOT / "Makefile").read_text()
    readme = (ROOT / "README.md").read_text()
    for target in ("demo", "test", "docs"):
        assert f"make {target}" in readme and f"\n{target}:" in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_relative_link_and_picture_exists():
    readme = (ROOT / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)", readme) if "://" not in t]
    assert "docs/guides/first-scenario.md" in targets  # the newcomer's path into the docs
    assert any(t.endswith(".svg") for t in targets)
    for target in targets:
        assert (ROOT / target).exists(), f"README links to missing {target}"
