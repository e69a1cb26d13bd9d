"""Record every built-in preset's episode records (timings stripped) as JSON, to compare runs.

    python benchmarks/record_baseline.py OUT.json [--episodes 2] [--seed 0]
    python benchmarks/record_baseline.py OUT.json --compare BEFORE.json
    python benchmarks/record_baseline.py --smoke       # one preset; prints, writes no file

Each preset runs with the trace agent (JUDGE stages: the accept-all judge, ``--judge none``)
through the public front door when it exists, in one process, into a throwaway store. Keys
that hold wall-clock figures are dropped, so the same seeds must give byte-equal JSON: a
refactor that changes behaviour shows up as a difference (the script prints the first ones).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

TIMING_KEYS = {"timings", "wall_s", "latency_s", "agent_latency_s", "started_at", "finished_at",
               "elapsed_s", "duration_s", "per_decision"}


def strip_timings(value: Any) -> Any:
    """``value`` without wall-clock keys (recursively)."""
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if k not in TIMING_KEYS
                and not k.endswith("_s")}
    if isinstance(value, list):
        return [strip_timings(v) for v in value]
    return value


def presets() -> list[str]:
    from magma_core.scenarios import list_scenarios

    return [f"{m.id}.{name}" for m in list_scenarios() for name in sorted(m.presets)]


def records_of(preset: str, episodes: int, seed: int, folder: Path) -> list[dict[str, Any]]:
    """The stored records of a fresh run of ``preset`` (trace agent, accept-all judge)."""
    try:
        from magma_core.runs import RunSpec, run
    except ImportError:
        return _records_before_front_door(preset, episodes, seed, folder)
    from magma_core.store import open_store

    run(RunSpec(target=preset, agent="trace", judge="none", episodes=episodes, seed=seed,
                out=folder, name=preset))
    with open_store(folder, create=False) as store:
        return [store.episode_record(preset, k) for k in range(episodes)]


def _records_before_front_door(preset: str, episodes: int, seed: int, folder: Path) -> list:
    from magma_core.runs.setup import build_agent, build_judge, load_task, open_executor, open_store

    from magma_core.runs.loop import RunLoop

    task = load_task(preset)
    agent = build_agent("trace", task)
    executor = open_executor(task, 1, seed, build_judge("none"), "auto")
    with open_store(folder) as store:
        store.open_run(preset, preset, {})
        RunLoop(task, agent, executor, store, preset, episodes=episodes, seed=seed).run()
        out = [store.episode_record(preset, k) for k in range(episodes)]
    executor.close()
    return out


def first_differences(a: Any, b: Any, path: str = "", limit: int = 5) -> list[str]:
    if type(a) is not type(b):
        return [f"{path}: {a!r:.80} != {b!r:.80}"]
    if isinstance(a, dict):
        out = [f"{path}.{k}: only on one side" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += first_differences(a[k], b[k], f"{path}.{k}", limit)
            if len(out) >= limit:
                break
        return out[:limit]
    if isinstance(a, list):
        out = [f"{path}: lengths {len(a)} != {len(b)}"] if len(a) != len(b) else []
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            out += first_differences(x, y, f"{path}[{i}]", limit)
            if len(out) >= limit:
                break
        return out[:limit]
    return [] if a == b else [f"{path}: {a!r:.80} != {b!r:.80}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, nargs="?", default=None,
                        help="where to write the JSON (required unless --smoke)")
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", type=Path, default=None, help="baseline JSON to compare to")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.output is None and not args.smoke:
        parser.error("the output JSON path is required (or --smoke)")
    if args.smoke:
        args.episodes = 1
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for preset in presets()[:1] if args.smoke else presets():
            records = records_of(preset, args.episodes, args.seed, Path(tmp))
            result[preset] = strip_timings(records)
            statuses = [r["status"] for r in records]
            print(f"{preset:24s} {statuses}", flush=True)
    if args.output is not None:
        args.output.write_text(json.dumps(result, indent=1, sort_keys=True))
        print(f"wrote {args.output}")
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    diffs = first_differences(before, json.loads(json.dumps(result)), limit=10)
    for line in diffs:
        print("DIFF", line)
    print("same episode records as the baseline" if not diffs else f"{len(diffs)}+ differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
