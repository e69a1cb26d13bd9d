"""The guides' code blocks that show an example file: each is preceded by the comment
``<!-- example: PATH[:SECTION] -->`` and holds that file (or its section between the
``# --8<-- [start:SECTION]`` / ``[end:SECTION]`` markers, dedented) as it is, so a page read
as plain Markdown (a forge, an editor) shows the code the suite runs."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^<!-- example: ([^\s:]+)(?::([\w-]+))? -->\n(`{3,})[^\n]*\n(.*?)\n\3$",
                   re.M | re.S)
MARKER = re.compile(r"^\s*#\s*--8<--\s*\[(start|end):([\w-]+)\]\s*$")


def example_blocks(page: Path) -> list[tuple[str, str | None, str]]:
    """``(path, section or None, code shown)`` of every example block of ``page``."""
    return [(m[1], m[2] or None, m[4]) for m in BLOCK.finditer(page.read_text())]


def example_text(path: str, section: str | None) -> str:
    """What a block showing ``path`` (``section``) must hold: the file without its section
    markers, or the section's lines dedented."""
    lines = (ROOT / path).read_text().splitlines()
    if section is None:
        return "\n".join(line for line in lines if not MARKER.match(line)).strip("\n")
    out: list[str] = []
    inside = found = False
    for line in lines:
        marker = MARKER.match(line)
        if marker and marker[2] == section:
            inside = marker[1] == "start"
            found = True
        elif inside and not marker:
            out.append(line)
    if not found:
        raise AssertionError(f"{path} has no section {section!r}")
    return textwrap.dedent("\n".join(out)).strip("\n")
