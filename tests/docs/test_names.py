"""Every file path and every ``magma_core`` / ``magma_scenarios`` name the pages mention exists.

A module renamed or a file moved makes this fail, so the pages follow the code.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])
PATH = re.compile(r"`([A-Za-z_][\w/.-]*/[\w.-]+\.(?:py|toml|md|svg))`")
NAME = re.compile(r"`(magma_(?:core|scenarios)(?:\.\w+)+)`")
#: Where a path written in a page may be relative to.
BASES = [ROOT, ROOT / "src", ROOT / "examples", ROOT / "examples" / "my_magma_scenarios"]


def mentions(pattern: re.Pattern) -> list[tuple[str, str]]:
    return sorted({(p.relative_to(ROOT).as_posix(), m) for p in PAGES
                   for m in pattern.findall(p.read_text())})


def resolve(dotted: str) -> object:
    """The module or attribute ``dotted`` names (the longest importable module prefix)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("page,path", mentions(PATH))
def test_mentioned_path_exists(page, path):
    assert any((base / path).exists() for base in BASES), f"{page} mentions missing {path}"


@pytest.mark.parametrize("page,name", mentions(NAME))
def test_mentioned_name_exists(page, name):
    try:
        resolve(name)
    except (ModuleNotFoundError, AttributeError) as exc:
        pytest.fail(f"{page} mentions {name}, which does not exist ({exc})")


def test_names_are_found():
    assert ("docs/guides/stages.md", "magma_core.simulation.stage") in mentions(NAME)
    assert any(path == "magma_scenarios/cube/env.py" for _, path in mentions(PATH))
