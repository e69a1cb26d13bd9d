"""What the bridge tests compare: a tiny suite, and each trial's summary through ``magma bench run``.

The suite has two items that open differently (a ShortSorting task, clean and paraphrased),
so the served trace (:mod:`.trace_model`) can tell their conversations apart. A trial's
summary is :func:`~magma_core.integrations.inspect.mapping.episode_summary` of its stored
record; :func:`comparable` keeps what must be equal through any driver: the verdict, the
engine's status and reason, every stage's result and budget score, the counters, the seed.
"""

from __future__ import annotations

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
    """``magma bench run`` of ``suite`` with ``agent``: each trial's summary by
    ``(item id, Inspect epoch)`` (trial k is epoch k + 1)."""
    result = run_bench(BenchSpec(suite, agent=agent, trials=trials, slots=slots, out=out, name="bridge"))
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
