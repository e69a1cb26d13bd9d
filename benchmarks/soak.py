"""Soak: peak resident memory of ``magma run``, ``magma bench run`` and ``magma gen`` at a small
and a large amount of work, side by side (issue 38: memory holds what is in flight, not what
is done; the target is a large/small ratio within 1.10).

Each measurement is the real command in a fresh process (``python -m magma_core.cli ...``) on a
fresh store; its peak resident set size is the kernel's (``os.wait4``'s ``ru_maxrss``), start-up,
progress display and result table included. The units:

- run: episodes of ``sorting.SortAll`` with the trace agent, ``--slots`` side by side;
- bench: trials of the 5-item ``smoke`` suite (SortAll under every condition), ``N / 5`` per item;
- gen: candidates (``--max-nodes N``) of ``sorting.SortAll`` with the noisy-trace agent,
  ``N / 25`` trees.

The small and the large measurement of a driver run at the same time (``--jobs``, 2 by
default; resident memory does not depend on the neighbour, the wall time does). Prints
figures only; nothing is asserted.

    .venv/bin/python benchmarks/soak.py [--small 100] [--large 2000] [--drivers run bench gen]
        [--slots 4] [--jobs 2] [--smoke]

``--smoke``: 4 against 12 (under a minute).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

DRIVERS = ("run", "bench", "gen")
UNITS = {"run": "episodes", "bench": "trials", "gen": "candidates"}
SUITE_ITEMS = 5  # the shipped ``smoke`` suite
TARGET = 1.10


@dataclass(frozen=True)
class Measure:
    driver: str
    amount: int
    peak_mb: float
    wall_s: float
    status: int
    tail: str  # the end of stderr, when the command failed


def command(driver: str, amount: int, out: Path, slots: int, suite: Path | None) -> list[str]:
    """The CLI command that does ``amount`` units of ``driver``'s work into store ``out``."""
    cli = [sys.executable, "-m", "magma_core.cli"]
    if driver == "run":
        return cli + ["run", "sorting.SortAll", "--agent", "trace", "--episodes", str(amount),
                      "--slots", str(slots), "--out", str(out), "--name", "soak"]
    if driver == "bench":
        trials = max(1, -(-amount // SUITE_ITEMS))
        return cli + ["bench", "run", str(suite), "--agent", "trace", "--trials", str(trials),
                      "--slots", str(slots), "--out", str(out), "--name", "soak"]
    return cli + ["gen", "sorting.SortAll", "--agent", "noisy-trace:0.2", "--max-nodes", str(amount),
                  "--trees", str(max(1, amount // 25)), "--slots", str(slots), "--out", str(out),
                  "--name", "soak"]


def measure(driver: str, amount: int, folder: Path, slots: int, suite: Path | None) -> Measure:
    """Run one command in a fresh process; its peak resident memory (MB) and wall time."""
    out = folder / f"{driver}-{amount}"
    started = time.perf_counter()
    with open(folder / f"{driver}-{amount}.err", "w+") as err:
        proc = subprocess.Popen(command(driver, amount, out, slots, suite), stdout=subprocess.DEVNULL,
                                stderr=err, env=os.environ | {"PYTHONWARNINGS": "ignore"})
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = "" if proc.returncode == 0 else err.read()[-600:]
    return Measure(driver, amount, usage.ru_maxrss / 1024, time.perf_counter() - started,
                   proc.returncode, tail)


def compile_suite(folder: Path) -> Path:
    """The shipped ``smoke`` suite, compiled into ``folder``."""
    suite = folder / "suite"
    subprocess.run([sys.executable, "-m", "magma_core.cli", "bench", "compile", "smoke", "--out",
                    str(suite)], check=True, capture_output=True,
                   env=os.environ | {"PYTHONWARNINGS": "ignore"})
    return suite


def table(rows: list[tuple[Measure, Measure]]) -> list[str]:
    """One line per driver: small and large amount, their peaks and the ratio."""
    lines = [f"{'driver':<6} {'unit':<10} {'small':>6} {'peak MB':>8} {'wall s':>7} "
             f"{'large':>6} {'peak MB':>8} {'wall s':>7} {'ratio':>6}  target <= {TARGET:.2f}"]
    for small, large in rows:
        ratio = large.peak_mb / small.peak_mb if small.peak_mb else float("nan")
        ok = small.status == 0 and large.status == 0
        verdict = ("within" if ratio <= TARGET else "OVER") if ok else "FAILED"
        lines.append(f"{small.driver:<6} {UNITS[small.driver]:<10} {small.amount:>6} "
                     f"{small.peak_mb:>8.0f} {small.wall_s:>7.1f} {large.amount:>6} "
                     f"{large.peak_mb:>8.0f} {large.wall_s:>7.1f} {ratio:>6.3f}  {verdict}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100, help="units of the small measurement (100)")
    parser.add_argument("--large", type=int, default=2000, help="units of the large measurement (2000)")
    parser.add_argument("--drivers", nargs="+", choices=DRIVERS, default=list(DRIVERS))
    parser.add_argument("--slots", type=int, default=4, help="slots of each engine (4)")
    parser.add_argument("--jobs", type=int, default=2, help="commands at a time (2)")
    parser.add_argument("--smoke", action="store_true", help="4 against 12, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.small, args.large = 4, 12
    print(f"soak: peak resident memory at {args.small} and {args.large} units, {args.slots} slots, "
          f"{args.jobs} command(s) at a time, load {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = compile_suite(folder) if "bench" in args.drivers else None
        jobs = [(d, n) for d in args.drivers for n in (args.small, args.large)]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(lambda job: measure(*job, folder, args.slots, suite), jobs))
    rows = [(results[i], results[i + 1]) for i in range(0, len(results), 2)]
    for line in table(rows):
        print(line)
    for m in results:
        if m.status != 0:
            print(f"{m.driver} {m.amount}: exit status {m.status}: {m.tail.strip()}")


if __name__ == "__main__":
    main()
