"""A scenario module that cannot be imported is one line naming the scenario's own file and
line where the import failed (not only the module that imported it)."""

from __future__ import annotations

import importlib
import sys

import pytest

from magma_core.scenarios.registry import where


def test_the_innermost_scenario_line_is_named(tmp_path, monkeypatch):
    package = tmp_path / "broken_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "stages.py").write_text("import math\n\nfrom math import Onn  # the typo\n")
    (package / "presets.py").write_text("from broken_pkg import stages  # noqa\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ImportError) as info:
            importlib.import_module("broken_pkg.presets")
        assert where(info.value) == f" (at {package / 'stages.py'}:3)"
    finally:
        for name in [n for n in sys.modules if n.startswith("broken_pkg")]:
            del sys.modules[name]


def test_a_syntax_error_names_its_file_and_line(tmp_path, monkeypatch):
    (tmp_path / "syntax_pkg.py").write_text("x = 1\ndef f(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SyntaxError) as info:
        importlib.import_module("syntax_pkg")
    assert where(info.value) == f" (at {tmp_path / 'syntax_pkg.py'}:2)"
    assert where(ValueError("no traceback")) == ""
