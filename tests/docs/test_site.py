"""The documentation site builds with ``mkdocs build --strict``: no broken link, anchor,
snippet or API reference.

``make test`` installs the ``docs`` extra, so this runs in CI; it skips (saying why) only
where MkDocs is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("mkdocs", "material", "mkdocstrings_handlers.python", "pymdownx")


def missing_docs_packages() -> list[str]:
    out = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            out.append(name)
    return out


@pytest.mark.skipif(bool(missing_docs_packages()),
                    reason="the docs extra is not installed (pip install -e '.[docs]')")
def test_site_builds_strict(tmp_path: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    for page in ("index.html", "guides/first-scenario.html", "concepts/engine.html",
                 "reference/tools.html", "guides/viewer.html", "guides/generated-tasks.html"):
        assert (site / page).is_file(), page
    guide = (site / "guides" / "first-scenario.html").read_text()
    assert "MoveCubeAtEntry" in guide and "BaseStageEnvironmentTransition" in guide  # included
    assert "--8&lt;--" not in guide and "--8<--" not in guide
    assert "active_requests" in guide and "left_tray" in guide  # definition and YAML included
    assert 'src="../images/viewer-episode.png"' in (site / "guides" / "viewer.html").read_text()
    reference = (site / "reference" / "tools.html").read_text()
    assert 'id="magma_core.simulation.tools.register_tool"' in reference
    assert "fonts.googleapis.com" not in (site / "index.html").read_text()
