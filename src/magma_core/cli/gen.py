"""``magma gen PRESET``: grow trees of candidate decisions from snapshots, store them, show them."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from magma_core.cli import CliError
from magma_core.cli.run import non_negative_int, positive_int, run_name

SAMPLING_TEMPERATURE = 1.0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gen", help="generate trees of decisions (training data) with an agent")
    parser.add_argument("target", help="scenario.Preset, e.g. sorting.SortAll")
    parser.add_argument("--agent", default="noisy-trace",
                        help="noisy-trace[:P] (default), trace, openai:MODEL[@BASE_URL] or http://HOST:PORT")
    parser.add_argument("--judge", default=None, help="openai:MODEL[@BASE_URL] for JUDGE stages")
    parser.add_argument("--branches", type=positive_int, default=2, help="candidates per situation B (2)")
    parser.add_argument("--slots", type=positive_int, default=4, help="simulator slots (4)")
    parser.add_argument("--max-per-stage", type=positive_int, default=10,
                        help="continuations started per stage from its finishers K (10)")
    parser.add_argument("--max-nodes", type=positive_int, default=200, help="candidates in all trees M (200)")
    parser.add_argument("--trees", type=positive_int, default=1, help="trees T, one per seed (1)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of tree 0 (0)")
    parser.add_argument("--max-decisions", type=positive_int, default=60, help="decisions per branch (60)")
    parser.add_argument("--name", type=run_name, default=None, help="generation name; same name resumes")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="store folder (runs)")
    parser.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend")
    parser.set_defaults(func=gen)


def build_gen_agent(spec_text: str, task: Any, seed: int) -> Any:
    """The agent of ``--agent``; the trace agents get the preset's perfect trace, and an
    OpenAI-compatible model without a set temperature samples at 1.0."""
    from magma_core.agents.spec import AgentSpecError, build_agent, parse_spec
    from magma_core.runs.assembly import build_run_agent

    try:
        spec = parse_spec(spec_text)
    except AgentSpecError as exc:
        raise CliError(str(exc)) from None
    if spec.kind != "noisy-trace":
        agent = build_run_agent(spec_text, task)
        if spec.kind == "openai" and getattr(agent, "temperature", 0) is None:
            agent.temperature = SAMPLING_TEMPERATURE  # B candidates must differ
        return agent
    trace = task.perfect_trace()
    if trace is None:
        raise CliError(f"task {task.name} has no perfect trace for the noisy-trace agent")
    return build_agent(spec_text, trace=trace, check=False, seed=seed)


def gen(args: argparse.Namespace) -> int:
    from magma_core.cli.display import make_console
    from magma_core.gen import Generator, GenSettings
    from magma_core.runs.assembly import build_judge, check_task, load_task, open_executor
    from magma_core.store import open_generation_store

    console = make_console()
    started = time.perf_counter()
    task = load_task(args.target)
    name = args.name or f"gen-{args.target}"
    settings = GenSettings(
        branches=args.branches, max_per_stage=args.max_per_stage, max_nodes=args.max_nodes,
        trees=args.trees, seed=args.seed, max_decisions=args.max_decisions,
    )
    store = open_generation_store(args.out)
    config = {**settings.shape(), "agent": args.agent, "slots": args.slots, "max_nodes": args.max_nodes,
              "trees": args.trees}
    try:
        stored = store.open_generation(name, args.target, config)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    changed = {k: (stored["config"].get(k), v) for k, v in settings.shape().items()
               if k in stored["config"] and stored["config"][k] != v}
    if changed:
        raise CliError(f"generation {name!r} was grown with other settings {changed} (stored, given); "
                       "choose another --name")
    judge = build_judge(args.judge)
    check_task(task, judge, args.target)
    agent = build_gen_agent(args.agent, task, args.seed)
    executor = open_executor(task, args.slots, args.seed, judge, args.backend)
    console.print(f"[bold]magma gen[/] {args.target} as {name!r}: B={settings.branches} "
                  f"slots={args.slots} K={settings.max_per_stage} M={settings.max_nodes} T={settings.trees}")
    progress = _Progress(console, settings, executor.num_slots)
    try:
        generator = Generator(task, agent, executor, store, name, settings, listener=progress)
        summary = generator.run()
        store.update_generation(name, config, finished=True)
        progress.done()
        console.print(tree_table(store, name))
        console.print(
            f"{summary['candidates']} candidates, {summary['situations']} situations, "
            f"{summary['successes']} successful branches; {summary['executed']} executed now in "
            f"{time.perf_counter() - started:.1f}s (snapshot save/restore "
            f"{summary['snapshot_s'] + summary['restore_s']:.2f}s). Store: {args.out / 'magma.db'}"
        )
    finally:
        executor.close()
        agent.close()
        store.close()
    return 0


class _Progress:
    """A live line: trees, candidates, successes, slots."""

    def __init__(self, console: Any, settings: Any, slots: int) -> None:
        self.console, self.settings, self.slots = console, settings, slots
        self.last = 0.0
        self.live = console.is_terminal

    def __call__(self, event: str, payload: dict[str, Any]) -> None:
        now = time.perf_counter()
        if now - self.last < 0.5:
            return
        self.last = now
        line = (f"trees {self.settings.trees}  nodes {payload['nodes']}/{self.settings.max_nodes}  "
                f"successes {payload['successes']}  slots busy {payload.get('busy', 0)}/{self.slots}")
        if self.live:
            self.console.print(line, end="\r")
        else:
            self.console.print(line)

    def done(self) -> None:
        if self.live:
            self.console.print(" " * 80, end="\r")


def tree_table(store: Any, name: str) -> Any:
    """Per tree: seed, situations, candidates, successes, invalid answers, best score."""
    from rich.table import Table

    from magma_core.gen import scores as sc

    table = Table(title=f"generation {name}")
    for column in ("tree", "seed", "situations", "candidates", "successes", "invalid", "depth", "best score"):
        table.add_column(column, justify="right")
    situations = store.situations(name)
    candidates = store.candidates(name)
    roots = {s.tree: s.id for s in situations if s.parent is None}
    for tree in store.trees(name):
        t = tree["tree"]
        mine = [c for c in candidates if c.tree == t]
        best = max((sc.score(sc.results_from_json(c.score)) for c in mine
                    if c.score and c.situation == roots.get(t)), default=0.0)
        table.add_row(
            str(t), str(tree["seed"]), str(sum(s.tree == t for s in situations)), str(len(mine)),
            str(sum(c.episode_status == "success" for c in mine)),
            str(sum(c.status == "invalid" for c in mine)),
            str(max((s.depth for s in situations if s.tree == t), default=0)), f"{best:.3f}",
        )
    return table
