"""Benchmarks (layer 7, on ``runs`` and ``store``): frozen suites of items (skeleton ×
semantic variation × condition, each perturbed item paired with its clean control), runs of
an agent over them K times, and reports (success with Wilson intervals, conditional
robustness, pass^k, cost).

- :func:`~magma_core.bench.suite.compile_suite` / :func:`~magma_core.bench.suite.load_suite`
- :func:`~magma_core.bench.runner.run_bench` (:class:`~magma_core.bench.runner.BenchSpec`)
- :func:`~magma_core.bench.report.bench_report`, ``write_html``, ``write_json``
"""
