"""``magma gen TARGET``: grow trees of candidate decisions from snapshots, store them, show them.

TARGET is a preset or a definition (each tree's seed generates its task); the agent options
are ``magma run``'s (model options, ``--concurrency``, ``--batch-window``, ``--agent-timeout``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.cli import CliError
from magma_core.cli.agent_options import add_agent_options, chat_options_from
from magma_core.cli.config_file import add_config_option
from magma_core.cli.ctor_args import accept_ctor_args
from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.cli.ray_option import ray_cluster_from
from magma_core.cli.run import (
    add_reuse_scenes_option,
    add_skills_option,
    add_user_option,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    run_name,
)
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from rich.console import Console
    from rich.table import Table

    from magma_core.gen import GenPlan, GenSpec, TreeSummary
    from magma_core.gen.coaching import CoachingSettings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gen", help="generate trees of decisions (training data) with an agent")
    accept_ctor_args(parser)
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
    parser.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    parser.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend")
    parser.add_argument("--randomized", action="store_true",
                        help="each tree's agent sees random public names (of tools, parameters and "
                        "objects) drawn with the tree's seed, as magma run --randomized")
    parser.add_argument("--coach", default=None, metavar="SPEC",
                        help="repair failed branches with a coach: trace (the reference solution), "
                        "openai:MODEL[@BASE_URL] or http://HOST:PORT (the agent's coaching routes)")
    parser.add_argument("--coaching-max-pending", type=positive_int, default=None, metavar="N",
                        help="coaching requests waiting for the coach per stage of a tree (2)")
    parser.add_argument("--coaching-max-unproven", type=positive_int, default=None, metavar="N",
                        help="coaching attempts not yet validated per stage of a tree (4)")
    parser.add_argument("--coach-temperature", type=non_negative_float, default=None, metavar="T",
                        help="an openai coach's sampling temperature (0)")
    parser.add_argument("--coach-max-tokens", type=positive_int, default=None, metavar="N",
                        help="an openai coach's max_tokens per reply (2000)")
    parser.add_argument("--coach-timeout", type=positive_float, default=None, metavar="SECONDS",
                        help="seconds for each request to an openai or http coach (120 / 360)")
    add_reuse_scenes_option(parser, "candidate")
    add_agent_options(parser)
    add_config_option(parser)
    add_user_option(parser, "tree")
    parser.add_argument("--record-control", action="store_true",
                        help="also store each executed candidate's control steps (joint state and "
                        "command; opt-in, for magma export --format lerobot)")
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
    add_skills_option(parser)
    parser.set_defaults(func=gen)


def spec_from_args(args: argparse.Namespace) -> GenSpec:
    """The ``GenSpec`` the options describe."""
    from magma_core.gen import GenSpec
    from magma_core.runs import LoopLimits, Pacing

    return GenSpec(
        target=args.target, agent=args.agent, judge=args.judge, branches=args.branches,
        slots=args.slots, max_per_stage=args.max_per_stage, max_nodes=args.max_nodes,
        trees=args.trees, seed=args.seed, limits=LoopLimits(max_decisions=args.max_decisions),
        name=args.name, out=args.out, backend=args.backend, randomized=args.randomized,
        agent_options=chat_options_from(args).given(),
        pacing=Pacing(concurrency=args.concurrency, batch_window=args.batch_window),
        agent_timeout=args.agent_timeout, ray=ray_cluster_from(args), coaching=_coaching_settings(args),
        target_args=dict(getattr(args, "ctor_args", {})),
        skills=tuple(args.skills) if args.skills else None,
        user=args.user, fresh_scenes=not args.reuse_scenes,
        record_control=args.record_control,
    )


def _coaching_settings(args: argparse.Namespace) -> CoachingSettings | None:
    """The coaching of ``--coach`` (None without it); coaching options without a coach are refused."""
    from magma_core.gen.coaching import CoachingSettings, build_coach
    from magma_core.gen.coaching.budgets import MAX_PENDING, MAX_UNPROVEN

    options = {k: v for k, v in (("temperature", args.coach_temperature),
                                 ("max_tokens", args.coach_max_tokens)) if v is not None}
    if args.coach is None:
        if (args.coaching_max_pending is not None or args.coaching_max_unproven is not None or options
                or args.coach_timeout is not None):
            raise CliError("--coaching-max-pending, --coaching-max-unproven and --coach-* options need --coach")
        return None
    build_coach(args.coach, options, args.coach_timeout).close()  # a bad spec is refused before any tree grows
    return CoachingSettings(args.coach, args.coaching_max_pending or MAX_PENDING,
                            args.coaching_max_unproven or MAX_UNPROVEN, options, args.coach_timeout)


def gen(args: argparse.Namespace) -> int:
    # Imported here: `magma --help` and the other commands never pay for the engine.
    from magma_core.cli.display import make_console
    from magma_core.gen import generate

    console = make_console()
    started = time.perf_counter()
    display = _Display(console, args.target)
    result = generate(spec_from_args(args), display)
    display.done()
    ray = args.ray is not None
    if result.failures and not ray:  # the agent could not be reached
        raise CliError(f"{result.failures[0]}; what is stored stays: the same command resumes")
    for line in result.failures:
        console.print(f"[red]error:[/] {line}")
    console.print(tree_table(result.name, result.trees))
    if result.coaching is not None:
        c = result.coaching
        console.print("coaching: " + ", ".join(f"{c.get(k, 0)} {k}" for k in (
            "corrected", "abandoned", "error", "skipped", "proven", "refuted", "unproven"))
            + f"; coaching took {c.get('coaching_s', 0.0):.2f} s (the coach {c.get('coach_s', 0.0):.2f} s)")
    counts = result.counts
    if ray:
        console.print(f"{counts['candidates']} candidates, {counts['situations']} situations, "
                      f"{counts['successes']} successful branches in "
                      f"{time.perf_counter() - started:.1f}s. Store: {result.store_path}")
    else:
        console.print(
            f"{counts['candidates']} candidates, {counts['situations']} situations, "
            f"{counts['successes']} successful branches; {result.executed} executed now in "
            f"{time.perf_counter() - started:.1f}s (snapshot save/restore "
            f"{result.snapshot_s:.2f}s). Store: {result.store_path}"
        )
    if result.failures:
        raise CliError(f"{len(result.failures)} Ray failure(s); what is stored stays: the same "
                       "command resumes")
    if result.errors:
        print(f"magma: {result.errors} candidate(s) of {result.name!r} hit a scenario error "
              "(status error; each keeps its reason and traceback in the store)", file=sys.stderr)
        return 1
    return 0


class _Display:
    """The generation's listener: the header, a live line (trees, candidates, successes,
    slots) or, with Ray, warnings and a line per stored tree."""

    def __init__(self, console: Console, target: str) -> None:
        self.console, self.target = console, target
        self.plan: GenPlan | None = None
        self.last = 0.0
        self.live = console.is_terminal

    def __call__(self, event: str, subject: object, payload: object) -> None:
        if event == "begin":
            self.plan = payload
            self.console.print(_header(self.target, payload))
        elif event == "warning":
            self.console.print(f"[yellow]warning:[/] {payload}")
        elif event == "tree":
            self.console.print(f"tree {subject}: {len(payload.candidates)} candidates, "
                               f"{len(payload.situations)} situations stored")
        elif event == "candidate":
            self._line(payload)

    def _line(self, payload: JSONDict) -> None:
        now = time.perf_counter()
        if now - self.last < 0.5:
            return
        self.last = now
        s = self.plan.settings
        line = (f"trees {s.trees}  nodes {payload['nodes']}/{s.max_nodes}  "
                f"successes {payload['successes']}  slots busy {payload.get('busy', 0)}/{self.plan.slots}")
        if self.live:
            self.console.print(line, end="\r")
        else:
            self.console.print(line)

    def done(self) -> None:
        if self.live and self.plan is not None and not self.plan.ray:
            self.console.print(" " * 80, end="\r")


def _header(target: str, plan: GenPlan) -> str:
    s = plan.settings
    randomized = " randomized" if plan.randomized else ""
    if plan.ray:
        return (f"[bold]magma gen --ray[/] {target} as {plan.name!r}: B={s.branches} "
                f"slots={plan.slots} per actor K={s.max_per_stage} "
                f"M={plan.tree_budget} per tree T={s.trees}{randomized}")
    return (f"[bold]magma gen[/] {target} as {plan.name!r}: B={s.branches} "
            f"slots={plan.slots} K={s.max_per_stage} M={s.max_nodes} T={s.trees}{randomized}")


def tree_table(name: str, trees: list[TreeSummary]) -> Table:
    """Per tree: seed, situations, candidates, successes, invalid answers, best score."""
    from rich.table import Table

    table = Table(title=f"generation {name}")
    for column in ("tree", "seed", "situations", "candidates", "successes", "invalid", "depth", "best score"):
        table.add_column(column, justify="right")
    for t in trees:
        table.add_row(str(t.tree), str(t.seed), str(t.situations), str(t.candidates),
                      str(t.successes), str(t.invalid), str(t.depth), f"{t.best_score:.3f}")
    return table
