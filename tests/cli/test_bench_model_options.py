"""``magma bench run`` takes the model options ``magma run`` takes, sends them to the model and
records the model with the benchmark run (its report names it)."""

from __future__ import annotations

import json

import pytest

from .conftest import magma

pytestmark = pytest.mark.sim


def test_bench_run_sends_and_records_the_model_options(workdir):
    from agents.agent_helpers import FakeOpenAI, completion

    (workdir / "agent.toml").write_text(
        '[agent]\ntemperature = 0.5\nmodel_seed_is_not_an_option = 1\n')
    bad = magma("bench", "run", "suite", "--agent", "openai:tiny@http://127.0.0.1:9/v1",
                "--agent-config", "agent.toml", cwd=workdir)
    assert bad.returncode == 2 and "unknown option model_seed_is_not_an_option" in bad.stderr
    (workdir / "agent.toml").write_text(
        '[agent]\ntemperature = 0.5\nseed = 4\n[judge]\nmax_tokens = 99\n')
    assert magma("bench", "compile", "smoke", "--out", "suite", cwd=workdir).returncode == 0
    server = FakeOpenAI()
    server.script = [completion("Done.")]
    try:
        proc = magma("bench", "run", "suite", "--agent", f"openai:tiny-model@{server.base_url}",
                     "--max-tokens", "64", "--report-role", "user", "--temperature", "0",
                     "--agent-config", "agent.toml", "--name", "tiny", "--out", "out",
                     cwd=workdir, timeout=400)
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 trials run" in proc.stdout
    sent = {(r.get("max_tokens"), r.get("temperature"), r.get("seed")) for r in server.requests}
    assert sent == {(64, 0.0, 4)}  # the flag wins over the file
    report = magma("bench", "report", "tiny", "--out", "out", "--json", "r.json", cwd=workdir)
    assert report.returncode == 0, report.stderr
    assert f"tiny: agent openai:tiny-model@{server.base_url}; model tiny-model at {server.base_url}" in report.stdout
    assert "report_role=\"user\"" in report.stdout
    model = json.loads((workdir / "r.json").read_text())["runs"]["tiny"]["agent"]["model"]
    assert model == {"name": "tiny-model", "endpoint": server.base_url,
                     "options": {"max_tokens": 64, "temperature": 0.0, "seed": 4, "report_role": "user"}}
    from magma_core.store import open_store

    with open_store(workdir / "out", create=False) as store:
        config = store.get_run("bench.tiny")["config"]
    assert config["judge_options"] == {"max_tokens": 99} and config["model"] == model


def test_runs_list_shows_runs_benchmarks_and_generations_with_their_agent(workdir):
    from magma_core.store import open_generation_store, open_store

    with open_store(workdir / "out", create=True) as store:
        store.open_run("bench.b", "smoke", {"agent": "openai:m@http://h/v1", "bench": "b", "episodes": 5,
                                            "model": {"name": "m", "endpoint": "http://h/v1", "options": {}}})
        store.open_run("plain", "cube.PickPlace", {"agent": "trace", "episodes": 1})
    with open_generation_store(workdir / "out") as gens:
        gens.open_generation("g", "cube.PickPlace", {"agent": "noisy-trace:0.3", "trees": 2})
    proc = magma("runs", "list", "--out", "out", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[1]: line for line in proc.stdout.splitlines() if line.startswith("│")
             and line.split()[1] in ("bench.b", "plain", "g")}
    assert "benchmark" in lines["bench.b"] and "m @ http://h/v1" in lines["bench.b"]
    assert "run" in lines["plain"] and "trace" in lines["plain"]
    assert "generation" in lines["g"] and "noisy-trace:0.3" in lines["g"] and "2 trees" in lines["g"]
