"""Replies a misbehaving protocol-2.0 agent server might send, drawn at random.

:func:`fuzz_reply` turns a good answer into one of :data:`REPLY_KINDS` (good decisions, bad
tool names and arguments, wrong types, missing and extra fields, duplicated or reordered
outputs, wrong ids, truncated JSON, NaN, lone surrogates, NUL and control characters,
megabyte strings, nesting 100,000 deep, empty bodies, HTML, 404 and 5xx, the agent's own
``timeout`` error). Plug it into a :class:`~magma_core.agents.loopback.LoopbackAgentServer`
as its ``reply`` hook (:func:`fuzzing_hook`); the robustness test and
``benchmarks/fuzz_agent_replies.py`` do.
"""

from __future__ import annotations

import copy
import json
import random
import threading
from collections import Counter
from collections.abc import Callable

from magma_core.json_types import JSONValue

Reply = tuple[int, bytes]


def _body(value: JSONValue) -> Reply:
    return 200, json.dumps(value).encode()


def _first_decision(answer: list[dict]) -> dict | None:
    for output in answer:
        if output.get("status") == "completed" and isinstance(output.get("output"), dict):
            return output["output"]
    return None


def _with_say(answer: list[dict], text_json: str) -> Reply:
    """The answer whose first output says ``text_json`` (a JSON string literal, escapes kept)."""
    marker = "__MAGMA_FUZZ_SAY__"
    answer = copy.deepcopy(answer)
    decision = _first_decision(answer)
    if decision is None:
        return _body(answer)
    decision["say"] = marker
    return 200, json.dumps(answer).replace(f'"{marker}"', text_json).encode()


def _tool_calls(answer: list[dict]) -> list[dict]:
    decision = _first_decision(answer)
    return decision.get("tool_calls", []) if decision else []


def _bad_tool(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    for call in _tool_calls(answer):
        call["name"] = rng.choice(["", "rm -rf /", "pick\u0000", "__import__('os')", "x" * 300, "PICK"])
    return _body(answer)


def _bad_arguments(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    for call in _tool_calls(answer):
        call["arguments"] = rng.choice([
            {"object": 5}, {"object": None}, {"unknown": "x"}, {"object": ["a", {"b": []}]},
            {"target": {"x": 1e308}}, {"object": "moon"}, {"position": [1, 2]},
        ])
    return _body(answer)


def _wrong_types(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    output = answer[0]
    key, value = rng.choice([
        ("memory", []), ("memory", "x"), ("output", "pick the cube"), ("status", 1),
        ("source_id", "0"), ("candidate_index", -1), ("internal_steps", {}),
        ("output", {"tool_calls": "pick", "say": 5}), ("output", {"tool_calls": [1, 2]}),
    ])
    output[key] = value
    return _body(answer)


def _missing_field(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    answer[0].pop(rng.choice(sorted(answer[0])), None)
    return _body(answer)


def _extra_field(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    answer[0][rng.choice(["extra", "__class__", "score"])] = {"a": 1}
    return _body(answer)


def _wrong_ids(rng: random.Random, answer: list[dict]) -> Reply:
    answer = copy.deepcopy(answer)
    key, value = rng.choice([("source_id", 10_000), ("request_id", "someone-else"),
                             ("candidate_index", 3)])
    answer[0][key] = value
    return _body(answer)


def _nested(depth: int) -> bytes:
    return b'[{"memory": ' + b"[" * depth + b"]" * depth + b"}]"


REPLY_KINDS: dict[str, Callable[[random.Random, list[dict]], Reply]] = {
    "good": lambda rng, a: _body(a),
    "bad_tool_name": _bad_tool,
    "bad_arguments": _bad_arguments,
    "wrong_types": _wrong_types,
    "missing_field": _missing_field,
    "extra_field": _extra_field,
    "duplicated_outputs": lambda rng, a: _body(a + copy.deepcopy(a)),
    "reordered_outputs": lambda rng, a: _body(list(reversed(a + [{"status": "completed"}]))),
    "wrong_ids": _wrong_ids,
    "truncated_json": lambda rng, a: (200, json.dumps(a).encode()[: rng.randint(0, 40)]),
    "nan": lambda rng, a: (200, json.dumps(a).replace('"memory": {', '"memory": {"v": NaN, ', 1).encode()),
    "lone_surrogate": lambda rng, a: _with_say(a, '"\\ud800 and \\udfff"'),
    "surrogate_memory": lambda rng, a: (200, json.dumps(a).replace(
        '"memory": {', '"memory": {"\\udc80": ["\\ud83d"], ', 1).encode()),
    "nul_and_controls": lambda rng, a: _with_say(a, '"a\\u0000b\\u001b[31mred\\u0007\\u009b"'),
    "megabyte_string": lambda rng, a: _with_say(a, json.dumps("m" * 1_000_000)),
    "deep_nesting": lambda rng, a: (200, _nested(100_000)),
    "moderate_nesting": lambda rng, a: (200, _nested(rng.choice([150, 600, 990]))),
    "empty_body": lambda rng, a: (200, b""),
    "html": lambda rng, a: (200, b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "not_found": lambda rng, a: (404, b'{"detail": "Not Found"}'),
    "server_error": lambda rng, a: (rng.choice([500, 502, 503]), b"upstream failed"),
    "agent_timeout_error": lambda rng, a: _body([{
        **{k: a[0][k] for k in ("request_id", "source_id", "candidate_index", "memory")},
        "status": "error", "internal_steps": [],
        "error": {"code": "timeout", "message": "model timed out \ud800", "component": "llm"},
    }]),
}


class FuzzingHook:
    """A ``reply`` hook sending kind ``k`` with probability ``weights[k]`` (default: good
    answers half the time, the rest uniform), seeded; ``counts`` says what was sent."""

    def __init__(self, seed: int = 0, good_share: float = 0.5) -> None:
        self.rng = random.Random(seed)
        self.good_share = good_share
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: JSONValue, answer: JSONValue) -> Reply:
        with self._lock:
            if self.rng.random() < self.good_share:
                kind = "good"
            else:
                kind = self.rng.choice([k for k in REPLY_KINDS if k != "good"])
            self.counts[kind] += 1
            seed = self.rng.random()
        return REPLY_KINDS[kind](random.Random(seed), answer)


def fuzzing_hook(seed: int = 0, good_share: float = 0.5) -> FuzzingHook:
    """A seeded :class:`FuzzingHook`."""
    return FuzzingHook(seed, good_share)
