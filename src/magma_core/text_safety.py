"""Make untrusted text safe for the store, the terminal, exports and judges.

Agent replies are untrusted: valid JSON can carry lone surrogates (``"\\ud800"``), which cannot
be encoded as UTF-8 (SQLite, files and terminals refuse them), NUL and other control
characters. :func:`safe_text` replaces every such character with U+FFFD (tab, newline and
carriage return are kept); :func:`safe_value` does it for every string (dict keys included)
in a JSON-like value, and replaces what is nested deeper than ``max_depth`` by a note.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
MAX_DEPTH = 200
#: Lone surrogates, C0 controls but tab/newline/return, DEL and C1 controls.
_UNSAFE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def safe_text(text: str) -> str:
    """``text`` with lone surrogates and control characters replaced by U+FFFD."""
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(REPLACEMENT, text)


def is_safe(text: str) -> bool:
    """True when :func:`safe_text` would leave ``text`` unchanged."""
    return _UNSAFE.search(text) is None


def safe_value(value: object, max_depth: int = MAX_DEPTH) -> object:
    """A copy of ``value`` whose strings are all safe; containers nested deeper than
    ``max_depth`` become the string ``"[nested too deep]"``. Other values are kept as they are
    (tuples become lists)."""
    return _safe(value, max_depth)


def _safe(value: object, depth: int) -> object:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        if depth <= 0:
            return "[nested too deep]"
        return {(safe_text(k) if isinstance(k, str) else k): _safe(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth <= 0:
            return "[nested too deep]"
        return [_safe(v, depth - 1) for v in value]
    return value
