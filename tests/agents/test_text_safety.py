"""Untrusted text made safe for SQLite, files, terminals and HTTP bodies."""

from __future__ import annotations

import json
import random
import sqlite3

from magma_core.text_safety import REPLACEMENT, is_safe, safe_text, safe_value


def test_lone_surrogates_nul_and_controls_are_replaced_and_the_rest_kept():
    text = json.loads('"a\\ud800b\\u0000c\\u001b[31m\\u009b\\tok\\nline\\r\\u00e9\\ud83d\\ude00"')
    assert safe_text(text) == f"a{REPLACEMENT}b{REPLACEMENT}c{REPLACEMENT}[31m{REPLACEMENT}\tok\nline\ré😀"
    assert is_safe(safe_text(text)) and not is_safe(text)


def test_random_strings_become_encodable_everywhere():
    rng = random.Random(7)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (v TEXT)")
    for _ in range(2000):
        text = "".join(chr(rng.choice([rng.randrange(0, 0x20), rng.randrange(0xD800, 0xE000),
                                        rng.randrange(0x20, 0x3000), 0x7f, 0x85]))
                       for _ in range(rng.randrange(0, 12)))
        safe = safe_text(text)
        safe.encode("utf-8")  # would raise on a lone surrogate
        conn.execute("INSERT INTO t VALUES (?)", (safe,))
        assert len(safe) == len(text)


def test_safe_value_cleans_keys_and_values_and_bounds_depth():
    value = {"k\ud800": ["\x00", ("x", 1.5)], "n": None}
    assert safe_value(value) == {f"k{REPLACEMENT}": [REPLACEMENT, ["x", 1.5]], "n": None}
    deep: list = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]
    cleaned = safe_value(deep)
    json.dumps(cleaned)  # no RecursionError
    assert "nested too deep" in json.dumps(cleaned)
