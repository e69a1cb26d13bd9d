"""The README's quick start and its links into the documentation hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


def from_python_code() -> str:
    """The code block of the README's "From Python" section."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.sim
def test_the_from_python_section_runs_all_three_drivers(tmp_path, monkeypatch, capsys):
    code = from_python_code()
    for front_door in ("run(RunSpec(", "run_bench(BenchSpec(", "generate(GenSpec("):
        assert front_door in code
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines() if "print(" in line]
    assert printed == expected
