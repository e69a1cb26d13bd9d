"""What the bridge tests compare: a tiny suite, and each trial's summary through ``magma bench run``.

The suite has two items that open differently (a ShortSorting task, clean and paraphrased),
so the served trace (:mod:`.trace_model`) can tell their conversations apart. A trial's
summary is :func:`~magma_core.integrations.inspect.mapping.episode_summary` of its stored
record; :func:`comparable` keeps what must be equal through any driver: the verdict, the
engine's status and reason, every stage's result and budget score, the counters, the seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite, load_suite
from magma_core.integrations.inspect.mapping import episode_summary
from magma_core.store.bench_store import bench_run_name, open_bench_store, trial_of

TINY_SUITE = """name: tiny
description: one ShortSorting task, clean and paraphrased (the Inspect bridge's tests)
conditions: [clean, paraphrase]
skeletons:
  - {definition: sorting.ShortSorting, seeds: 1, length_bucket: short}
"""
COMPARED = ("verdict", "status", "reason", "stages_passed", "num_stages", "stage_states",
            "tool_calls", "decisions", "seed", "stages")


def compile_tiny(folder: Path) -> Path:
    """The tiny suite compiled in ``folder/tiny``."""
    spec = folder / "tiny.yaml"
    spec.write_text(TINY_SUITE)
    compile_suite(spec, folder / "tiny")
    return folder / "tiny"


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: summary[key] for key in COMPARED}


def bench_summaries(suite: Path, agent: str, out: Path, trials: int, slots: int = 2) -> dict[tuple[str, int], dict[str, Any]]:
    """``magma bench run`` of ``suite`` with ``agent`` on ManiSkill's CPU simulator: each
    trial's summary by ``(item id, Inspect epoch)`` (trial k is epoch k + 1)."""
    result = run_bench(BenchSpec(suite, agent=agent, trials=trials, slots=slots, out=out, name="bridge",
                                 backend="cpu"))
    assert not result.given_up and not result.failures, result.failures
    items = load_suite(suite).items
    out_summaries = {}
    with open_bench_store(out, create=False) as store:
        run = bench_run_name("bridge")
        for episode in store.episodes(run):
            position, k = trial_of(episode.episode, trials)
            record = store.episode_record(run, episode.episode)
            out_summaries[(items[position]["item_id"], k + 1)] = episode_summary(record)
    return out_summaries


def request_view(request: dict[str, Any], drop: tuple[str, ...] = ()) -> tuple:
    """What a chat request shows the model: each message (role, text, calls with their
    arguments, the call a tool message answers), the tools offered (without the function
    keys in ``drop``) and ``tool_choice``."""
    messages = []
    for m in request["messages"]:
        calls = tuple((c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                      for c in m.get("tool_calls") or [])
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        messages.append((m["role"], content, repr(calls), m.get("tool_call_id")))
    tools = sorted(json.dumps({k: v for k, v in t["function"].items() if k not in drop}, sort_keys=True)
                   for t in request.get("tools") or [])
    return tuple(messages), tuple(tools), json.dumps(request.get("tool_choice"))


def requests_seen(requests: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> list[tuple]:
    """The requests' views, in a defined order (trials run side by side: arrival order is not)."""
    return sorted(request_view(r, drop) for r in requests)
