"""The guides show the example files as they are: included by the docs build, never copied.

(The strict build, ``test_site.py``, fails on a snippet whose file is gone.)
"""

from __future__ import annotations

import re
from pathlib import Path

from .test_examples import EXAMPLES, PACKAGE, example_scripts

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPET = re.compile(r'^--8<-- "([^"]+?)(?::[\w-]+)?"$', re.M)


def included_files(page: Path) -> set[str]:
    """Paths (relative to the repository) that ``page`` includes with snippets."""
    return set(SNIPPET.findall(page.read_text()))


def test_first_scenario_guide_shows_every_file_of_the_example_package():
    shown = included_files(DOCS / "guides" / "first-scenario.md")
    package_files = {
        p.relative_to(ROOT).as_posix()
        for p in [*PACKAGE.rglob("*.py"), PACKAGE / "pyproject.toml"]
        if p.read_text().strip() and "egg-info" not in p.as_posix() and "/build/" not in p.as_posix()
    }
    assert package_files == shown
    page = (DOCS / "guides" / "first-scenario.md").read_text()
    for command in ("magma scenarios show my_cubes", "magma test-tools my_cubes.SwitchAndPlace",
                    "magma run my_cubes.SwitchAndPlace --agent trace"):
        assert command in page


def test_every_example_script_is_shown_by_a_page():
    shown = set().union(*(included_files(p) for p in DOCS.rglob("*.md")))
    for script in example_scripts():
        assert script.relative_to(ROOT).as_posix() in shown, f"no page shows {script}"


def test_every_example_module_is_used():
    """Helper modules of the examples (no ``__main__``) are imported by some script."""
    scripts = example_scripts()
    sources = "\n".join(p.read_text() for p in scripts)
    for module in EXAMPLES.rglob("*.py"):
        if PACKAGE in module.parents or module in scripts:
            continue
        assert re.search(rf"^from {module.stem} import", sources, re.M), module
