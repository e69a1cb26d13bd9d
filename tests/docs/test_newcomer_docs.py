"""What a newcomer reads first is true: the README lists every built-in scenario, the
reference pages are readable Markdown in the repository and up to date, and the suites
the scenarios ship are described in the docs."""

from __future__ import annotations

import re
from pathlib import Path

from magma_core.scenarios import list_scenarios

ROOT = Path(__file__).resolve().parents[2]


def _builtin() -> list[str]:
    return sorted(m.id for m in list_scenarios() if m.presets and next(iter(m.presets.values()))
                  .startswith("magma_scenarios."))


def test_the_readme_lists_every_built_in_scenario():
    readme = (ROOT / "README.md").read_text()
    (row,) = [line for line in readme.splitlines() if line.startswith("| `src/magma_scenarios`")]
    assert sorted(re.findall(r"`(\w+)`", row.split("|")[2])) == _builtin()


def test_the_reference_pages_are_readable_markdown_and_current():
    """Each reference page holds its API as Markdown (not a build-time placeholder) and is
    what docs/hooks/reference_markdown.py writes from the code now."""
    import sys

    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    import reference_markdown

    pages = reference_markdown.expected_pages()
    stale = [p.name for p, text in pages.items() if not p.exists() or p.read_text() != text]
    assert not stale, f"stale reference pages (python docs/hooks/reference_markdown.py): {stale}"
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        assert not re.search(r"^::: ", page.read_text(), re.M), page.name  # no placeholder left
    goals = (ROOT / "docs" / "reference" / "goals.md").read_text()
    assert "### `At`" in goals and "1 where `obj` lies within `thresh` of `area`" in goals
    assert "### `Regex`" in (ROOT / "docs" / "reference" / "stages.md").read_text()
    assert "--keep-duplicates" in (ROOT / "docs" / "reference" / "cli.md").read_text()


def test_the_suites_the_scenarios_ship_are_described_in_the_docs():
    from magma_core.bench.suite import installed_suites

    page = (ROOT / "docs" / "reference" / "suites.md").read_text()
    for name in installed_suites():
        assert f"## `{name}`" in page
    assert "suites.md" in (ROOT / "mkdocs.yml").read_text()
