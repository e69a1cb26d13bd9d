"""``magma gen TARGET``: grow trees of candidate decisions from snapshots, store them, show them.

TARGET is a preset or a definition (each tree's seed generates its task); the agent options
are ``magma run``'s (model options, ``--concurrency``, ``--batch-window``, ``--agent-timeout``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from magma_core.cli import CliError
from magma_core.cli.agent_options import add_agent_options, chat_options_from
from magma_core.cli.run import (
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    run_name,
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gen", help="generate trees of decisions (training data) with an agent")
    parser.add_argument("target", help="scenario.Preset (e.g. sorting.SortAll) or scenario.Definition "
                        "(e.g. sorting.LongSorting: each tree's seed generates its task)")
    parser.add_argument("--agent", default="noisy-trace",
                        help="noisy-trace[:P] (default), trace, openai:MODEL[@BASE_URL] or http://HOST:PORT")
    parser.add_argument("--judge", default=None, help="openai:MODEL[@BASE_URL] for JUDGE stages")
    parser.add_argument("--branches", type=positive_int, default=2, help="candidates per situation B (2)")
    parser.add_argument("--slots", type=positive_int, default=4, help="simulator slots (4)")
    parser.add_argument("--max-per-stage", type=positive_int, default=10,
                        help="continuations started per stage from its finishers K (10)")
    parser.add_argument("--max-nodes", type=positive_int, default=200, help="candidates in all trees M (200; with --ray: ceil(M / T) per tree)")
    parser.add_argument("--trees", type=positive_int, default=1, help="trees T, one per seed (1)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of tree 0 (0)")
    parser.add_argument("--max-decisions", type=positive_int, default=60, help="decisions per branch (60)")
    parser.add_argument("--name", type=run_name, default=None, help="generation name; same name resumes")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="store folder (runs)")
    parser.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend")
    parser.add_argument("--randomized", action="store_true",
                        help="each tree's agent sees a random public vocabulary (tool, parameter and "
                        "object names) drawn with the tree's seed, as magma run --randomized")
    add_agent_options(parser)
    parser.add_argument("--concurrency", type=positive_int, default=None,
                        help="agent requests in flight at most (default: one per slot)")
    parser.add_argument("--batch-window", type=non_negative_float, default=0.0, metavar="SECONDS",
                        help="gather the inputs sent within SECONDS into one request (0)")
    parser.add_argument("--agent-timeout", type=positive_float, default=None, metavar="SECONDS",
                        help="seconds for each request to an http/openai agent (the agent's default)")
    parser.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
        help="grow the trees in engine actors on a Ray cluster (pip install 'magma[ray]'), one "
        "tree per unit of work, each with its share of the budget, ceil(M / T) candidates; "
        "without ADDRESS a local cluster, 'auto' the cluster this machine joined, or HOST:PORT. "
        "One actor per CPU of the cluster; a tree stored is done (resume skips it)",
    )
    parser.set_defaults(func=gen)


def gen(args: argparse.Namespace) -> int:
    from magma_core.cli.display import make_console
    from magma_core.gen import Generator, GenSettings
    from magma_core.gen.assembly import prepare_generation
    from magma_core.runs import AgentOutage, Pacing
    from magma_core.runs.assembly import open_executor
    from magma_core.store import open_generation_store

    console = make_console()
    started = time.perf_counter()
    name = args.name or f"gen-{args.target}"
    settings = GenSettings(
        branches=args.branches, max_per_stage=args.max_per_stage, max_nodes=args.max_nodes,
        trees=args.trees, seed=args.seed, max_decisions=args.max_decisions,
    )
    pacing = Pacing(concurrency=args.concurrency, batch_window=args.batch_window)
    shape = {**settings.shape(), "randomized": args.randomized}
    config = {**shape, "agent": args.agent, "slots": args.slots, "max_nodes": args.max_nodes,
              "trees": args.trees, **({"ray": True} if args.ray is not None else {})}
    parts = prepare_generation(
        args.target, args.agent, judge=args.judge, seed=args.seed, trees=args.trees,
        randomized=args.randomized, agent_options=chat_options_from(args).given(),
        agent_timeout=args.agent_timeout,
    )
    store = open_generation_store(args.out)
    try:
        store.lease("generation", name)  # a second writer of this name is refused in one line
        try:
            stored = store.open_generation(name, args.target, config)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        before = {"randomized": False, **stored["config"]}
        changed = {k: (before[k], v) for k, v in shape.items() if k in before and before[k] != v}
        if changed:
            raise CliError(f"generation {name!r} was grown with other settings {changed} (stored, given); "
                           "choose another --name")
        if args.ray is not None:
            if store.trees(name) and not before.get("ray"):
                raise CliError(f"generation {name!r} was grown without --ray: resume it without --ray "
                               "(with --ray a stored tree counts as finished)")
            parts.agent.close()  # the actors build their own
            return _gen_on_ray(args, console, store, name, settings, pacing, config, started)
        executor = open_executor(parts.task, args.slots, args.seed, parts.judge, args.backend)
    except BaseException:
        parts.agent.close()
        store.close()
        raise
    console.print(f"[bold]magma gen[/] {args.target} as {name!r}: B={settings.branches} "
                  f"slots={args.slots} K={settings.max_per_stage} M={settings.max_nodes} T={settings.trees}"
                  + (" randomized" if args.randomized else ""))
    progress = _Progress(console, settings, executor.num_slots)
    try:
        generator = Generator(parts.task, parts.agent, executor, store, name, settings,
                              listener=progress, trees=parts.trees, pacing=pacing)
        try:
            summary = generator.run()
        except AgentOutage as exc:
            raise CliError(f"{exc}; what is stored stays: the same command resumes") from None
        store.update_generation(name, config, finished=True)
        progress.done()
        console.print(tree_table(store, name))
        console.print(
            f"{summary['candidates']} candidates, {summary['situations']} situations, "
            f"{summary['successes']} successful branches; {summary['executed']} executed now in "
            f"{time.perf_counter() - started:.1f}s (snapshot save/restore "
            f"{summary['snapshot_s'] + summary['restore_s']:.2f}s). Store: {args.out / 'magma.db'}"
        )
        errors = scenario_errors(store, name, console)
    finally:
        executor.close()
        parts.agent.close()
        store.close()
    return 1 if errors else 0


def scenario_errors(store: Any, name: str, console: Any) -> int:
    """The generation's candidates whose episode hit a scenario error; a summary line when
    there are any (each keeps its reason and traceback in the store)."""
    errors = [c for c in store.candidates(name) if c.episode_status == "error"]
    if errors:
        console.print(f"[red]error:[/] {len(errors)} candidate(s) of {name!r} hit a scenario error "
                      "(status error; each keeps its reason and traceback in the store)")
    return len(errors)


def _gen_on_ray(args: argparse.Namespace, console: Any, store: Any, name: str, settings: Any,
                pacing: Any, config: dict[str, Any], started: float) -> int:
    """The trees not yet stored, grown on ``--ray``'s cluster (see :mod:`magma_core.gen.ray_trees`)."""
    from magma_core.cli.ray_option import ray_cluster_from
    from magma_core.gen.ray_trees import TreeJob, grow_on_ray, tree_budget

    job = TreeJob(args.target, args.agent, args.judge, settings, args.randomized,
                  chat_options_from(args).given(), args.agent_timeout, args.slots, args.backend, pacing)
    console.print(f"[bold]magma gen --ray[/] {args.target} as {name!r}: B={settings.branches} "
                  f"slots={args.slots} per actor K={settings.max_per_stage} "
                  f"M={tree_budget(settings.max_nodes, settings.trees)} per tree T={settings.trees}"
                  + (" randomized" if args.randomized else ""))

    def listener(event: str, note: Any, payload: Any) -> None:
        if event == "warning":
            console.print(f"[yellow]warning:[/] {payload}")

    def on_tree(tree: int, grown: Any) -> None:
        console.print(f"tree {tree}: {len(grown.candidates)} candidates, "
                      f"{len(grown.situations)} situations stored")

    try:
        failures = grow_on_ray(ray_cluster_from(args), job, store, name, listener, on_tree)
        for line in failures:
            console.print(f"[red]error:[/] {line}")
        store.update_generation(name, config, finished=not failures)
        console.print(tree_table(store, name))
        counts = store.counts(name)
        console.print(f"{counts['candidates']} candidates, {counts['situations']} situations, "
                      f"{counts['successes']} successful branches in "
                      f"{time.perf_counter() - started:.1f}s. Store: {args.out / 'magma.db'}")
        errors = scenario_errors(store, name, console)
    finally:
        store.close()
    if failures:
        raise CliError(f"{len(failures)} Ray failure(s); what is stored stays: the same command resumes")
    return 1 if errors else 0


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
