"""What coaching buys in ``magma gen``: the same node budget with and without ``--coach trace``.

Runs ``magma gen sorting.LongSorting --agent noisy-trace:0.3`` twice in one invocation (fresh
store each, same seed, same ``--max-nodes`` M, ``--trees`` T, ``--slots``), once plain and once
with ``--coach trace``, and prints side by side: wall time; task successes and stage successes
(FINISH verdicts) per hour; failed branches (terminal events: failure, exceeded, no action,
invalid answer, suboptimal finish) and the share turned into validated recoveries (coaching
attempts proven by the engine / terminal events); exported chat rows and preference pairs
(``magma export`` defaults); and the time coaching adds: its own (routing, storing, the
coach, as ``magma gen`` reports it) and the wall difference per node (noisy on a loaded
machine: the runs differ in what they execute). Prints figures only.

    .venv/bin/python benchmarks/coaching.py [--max-nodes 200] [--trees 2] [--slots 4] [--max-per-stage 1] [--smoke]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from magma_core.export import ExportSettings, load_forest
from magma_core.export.writers import chat_rows, preference_rows
from magma_core.gen.coaching.manager import _node
from magma_core.gen.coaching.opportunities import terminal_event
from magma_core.store import GenerationStore

TARGET = "sorting.LongSorting"


def generate(folder: Path, args: argparse.Namespace, coach: bool) -> dict[str, float]:
    command = [sys.executable, "-m", "magma_core.cli", "gen", TARGET, "--agent", "noisy-trace:0.3",
               "--max-nodes", str(args.max_nodes), "--trees", str(args.trees), "--slots", str(args.slots),
               "--branches", "2", "--max-per-stage", str(args.max_per_stage), "--backend", "cpu", "--out", str(folder), "--name", "b",
               *(["--coach", "trace"] if coach else [])]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"magma gen failed:\n{done.stderr[-3000:]}")
    took = re.search(r"coaching took ([0-9.]+) s", done.stdout)
    with GenerationStore(folder / "magma.db") as store:
        candidates = store.candidates("b")
        rows = store.coaching("b")
    terminals = sum(terminal_event(_node(c)) is not None for c in candidates if not c.coaching)
    proven = sum(r.outcome == "proven" for r in rows)
    forest = load_forest(folder / "magma.db", "b")
    settings = ExportSettings()
    return {
        "wall_s": wall, "nodes": len(candidates), "coaching_s": float(took.group(1)) if took else 0.0,
        "task_successes": sum(c.episode_status == "success" for c in candidates),
        "stage_successes": sum((c.execution or {}).get("stage_success") == "FINISH" for c in candidates),
        "failed_branches": terminals, "coached_nodes": sum(bool(c.coaching) for c in candidates),
        "coaching_requests": sum(r.status != "skipped" for r in rows), "proven": proven,
        "chat_rows": len(chat_rows(forest, settings)),
        "preference_pairs": len(preference_rows(forest, settings)),
        "repair_pairs": len(forest.repairs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-nodes", type=int, default=200)
    parser.add_argument("--trees", type=int, default=2)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--max-per-stage", type=int, default=1, help="K: continuations per stage (1: deep trees)")
    parser.add_argument("--smoke", action="store_true", help="a tiny budget (M=30, T=1, 2 slots)")
    args = parser.parse_args()
    if args.smoke:
        args.max_nodes, args.trees, args.slots = 30, 1, 2
    with tempfile.TemporaryDirectory() as tmp:
        plain = generate(Path(tmp) / "plain", args, coach=False)
        coached = generate(Path(tmp) / "coached", args, coach=True)
    print(f"magma gen {TARGET} --agent noisy-trace:0.3, M={args.max_nodes} T={args.trees} "
          f"slots={args.slots} B=2 K={args.max_per_stage}")
    print(f"{'':34}{'plain':>12}{'--coach trace':>16}")

    def line(label: str, a: float, b: float, fmt: str = "{:.0f}") -> None:
        print(f"{label:34}{fmt.format(a):>12}{fmt.format(b):>16}")

    for key, label in (("nodes", "nodes"), ("wall_s", "wall s"), ("task_successes", "task successes"),
                       ("stage_successes", "stage successes")):
        line(label, plain[key], coached[key], "{:.1f}" if key == "wall_s" else "{:.0f}")
    for key, label in (("task_successes", "successful trajectories / hour"),
                       ("stage_successes", "stage successes / hour")):
        line(label, 3600 * plain[key] / plain["wall_s"], 3600 * coached[key] / coached["wall_s"])
    line("failed branches", plain["failed_branches"], coached["failed_branches"])
    line("coaching requests / coached nodes", 0, coached["coaching_requests"])
    print(f"{'':34}{'':>12}{coached['coached_nodes']:>16.0f}")
    share = coached["proven"] / coached["failed_branches"] if coached["failed_branches"] else 0.0
    line("validated recoveries (proven)", 0, coached["proven"])
    line("share of failed branches recovered", 0, share, "{:.1%}")
    line("exported chat rows", plain["chat_rows"], coached["chat_rows"])
    line("preference pairs (of them repairs)", plain["preference_pairs"], coached["preference_pairs"])
    print(f"{'':34}{0:>12}{coached['repair_pairs']:>16}")
    line("coaching's own time (routing, coach), s", 0, coached["coaching_s"], "{:.2f}")
    per_node = (coached["wall_s"] / coached["nodes"] - plain["wall_s"] / plain["nodes"]) * 1000
    line("wall difference per node, ms", 0, per_node, "{:.1f}")


if __name__ == "__main__":
    main()
