"""What the viewer's benchmark and generation pages cost on stores of a realistic size.

Grows a generation of ``--nodes`` candidates (noisy-trace on ``--preset``) and runs the smoke
benchmark suite ``--trials`` times per item with the trace agent into a temporary store, then
prints, for ``/api/generations/NAME`` and ``/api/benchmarks/NAME``, the median time the API
takes (uvicorn on loopback, ``--repeat`` requests) and the JSON size; with Debian's chromium
present, also the time from opening each page to its tree or trial table being drawn.
Prints figures only; nothing is asserted.

    .venv/bin/python benchmarks/viewer_pages.py [--nodes 200] [--trials 4] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from magma_core.agents import NoisyTraceAgent
from magma_core.bench.runner import BenchSpec, run_bench
from magma_core.bench.suite import compile_suite
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from view.conftest import CHROMIUM, CHROMIUM_ARGS, ViewerServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="sorting.SortAll")
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        args.nodes, args.trials, args.repeat = 4, 1, 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        task = load_preset(args.preset)()
        settings = GenSettings(branches=3, max_nodes=args.nodes, max_per_stage=4)
        with GenerationStore(folder / "magma.db") as store, \
                Executor(task, num_slots=4, seed=0, backend="cpu") as executor:
            store.open_generation("g", args.preset, {**settings.shape(), "max_nodes": args.nodes})
            Generator(task, NoisyTraceAgent(task.perfect_trace(), noise=0.3, seed=1), executor,
                      store, "g", settings).run()
        suite = compile_suite("smoke", folder / "suite").parent
        run_bench(BenchSpec(suite, agent="trace", trials=args.trials, out=folder, name="b"))
        print(f"stores made in {time.perf_counter() - started:.1f}s: a generation of {args.nodes} "
              f"candidates, a benchmark of 5 items x {args.trials} trials")
        with ViewerServer(folder) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            for label, url in (("generation", "/api/generations/g"), ("benchmark", "/api/benchmarks/b")):
                times, size = [], 0
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    response = client.get(url)
                    times.append(time.perf_counter() - t)
                    size = len(response.content)
                print(f"{label:10s} API {url}: median {1000 * statistics.median(times):.1f} ms, "
                      f"{size / 1024:.1f} KiB")
            if CHROMIUM.exists() and not args.smoke:
                _browser_figures(server.url)


def _browser_figures(url: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 960})
        for label, hash_, selector in (("generation", "#/generations/g", "[data-candidate]"),
                                       ("benchmark", "#/benchmarks/b", "[data-testid=trials] tr[data-item]")):
            times = []
            for _ in range(3):
                page.goto("about:blank")
                t = time.perf_counter()
                page.goto(f"{url}/{hash_}")
                page.wait_for_selector(selector)
                times.append(time.perf_counter() - t)
            print(f"{label:10s} page drawn in chromium: median {1000 * statistics.median(times):.0f} ms "
                  f"({page.locator(selector).count()} rows/nodes)")
        browser.close()


if __name__ == "__main__":
    main()
