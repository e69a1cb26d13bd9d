"""Benchmarks (layer 7, on ``runs`` and ``store``): frozen suites of items (skeleton ×
semantic variation × condition, each perturbed item paired with its clean control), runs of
an agent over them K times, and reports (success with Wilson intervals, conditional
robustness, pass^k, cost).

- :func:`~magma_core.bench.suite.compile_suite` / :func:`~magma_core.bench.suite.load_suite`
- :func:`~magma_core.bench.runner.run_bench` (:class:`~magma_core.bench.runner.BenchSpec`)
- :func:`~magma_core.bench.report.bench_report`, ``write_html``, ``write_json``
"""

from typing import Any

_LAZY = {"BenchSpec": "runner", "BenchResult": "runner", "run_bench": "runner",
         "compile_suite": "suite", "load_suite": "suite", "bench_report": "report"}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """``bench.run_bench`` and friends, imported on first use (the viewer imports parts of
    this package without paying for the engine)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
