"""No reply can crash a run, at full count: ``magma run`` (a real subprocess, the real simulator)
against a loopback agent server sending seeded random replies (``fuzz_replies.REPLY_KINDS``:
good decisions, bad tools and arguments, wrong types, missing and extra fields, duplicated and
reordered outputs, wrong ids, truncated JSON, NaN, lone surrogates, NUL, megabyte strings,
nesting 100,000 deep, empty bodies, HTML, 404, 5xx) until ``--replies`` have been sent.

The run is resumed with more episodes until enough replies went out; after each command it
checks: exit status 0, no traceback, every episode stored exactly once, none stored as
``error``, every stored string safe. Prints the replies sent per kind; exits 1 on a violation.

    .venv/bin/python benchmarks/fuzz_agent_replies.py [--replies 10000] [--seed 0] [--slots 8]
                                                  [--good-share 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from magma_core.agents import TraceAgent
from magma_core.agents.fuzz_replies import fuzzing_hook
from magma_core.agents.loopback import LoopbackAgentServer
from magma_core.runs.assembly import load_task
from magma_core.text_safety import is_safe


def violations(out: Path, name: str, episodes: int, proc: subprocess.CompletedProcess) -> list[str]:
    """What broke the rules in this command's run, if anything."""
    found = []
    if "Traceback" in proc.stdout + proc.stderr:
        found.append("a traceback was printed:\n" + proc.stderr[-3000:])
    if proc.returncode != 0:
        found.append(f"exit status {proc.returncode}: {proc.stderr[-2000:]}")
    conn = sqlite3.connect(out / "magma.db")
    rows = conn.execute("SELECT episode, status, record FROM episodes WHERE run_name = ?", (name,)).fetchall()
    if sorted(r[0] for r in rows) != list(range(episodes)):
        found.append(f"stored episodes {sorted(r[0] for r in rows)} != 0..{episodes - 1}")
    errors = [r[0] for r in rows if r[1] == "error"]
    if errors:
        found.append(f"episodes stored as error: {errors}")
    unsafe = [r[0] for r in rows if not is_safe(json.dumps(json.loads(r[2]), ensure_ascii=False))]
    if unsafe:
        found.append(f"unsafe strings in the records of episodes {unsafe}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="cube.PickPlace")
    parser.add_argument("--replies", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=400, help="episodes added per command")
    parser.add_argument("--good-share", type=float, default=0.2, help="share of good replies")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.replies, args.slots, args.chunk = 12, 2, 3

    hook = fuzzing_hook(seed=args.seed, good_share=args.good_share)
    trace = load_task(args.preset).perfect_trace()
    started = time.perf_counter()
    episodes = 0
    with tempfile.TemporaryDirectory() as tmp, LoopbackAgentServer(TraceAgent(trace), reply=hook) as server:
        out = Path(tmp)
        while server.requests < args.replies:
            left = args.replies - server.requests
            episodes += max(args.slots, min(args.chunk, left // 3))
            proc = subprocess.run(
                [sys.executable, "-m", "magma_core.cli", "run", args.preset, "--agent", server.url,
                 "--episodes", str(episodes), "--slots", str(args.slots), "--seed", str(args.seed),
                 "--agent-timeout", "30", "--out", str(out), "--name", "fuzz"],
                capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
            )
            found = violations(out, "fuzz", episodes, proc)
            print(f"{episodes:>6} episodes stored, {server.requests:>6} replies sent, "
                  f"{time.perf_counter() - started:>6.0f} s", flush=True)
            if found:
                print("\n".join(found))
                sys.exit(1)
    print(f"{server.requests} replies, {episodes} episodes: no traceback, none stored as error, "
          f"each stored once. Replies per kind:")
    for kind, count in sorted(hook.counts.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:<22} {count:>6}")


if __name__ == "__main__":
    main()
