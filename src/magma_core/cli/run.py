"""``magma run PRESET``: parse the options into a ``RunSpec``, call ``magma_core.runs.run``,
and show progress and results. Everything else happens behind the front door."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.agents.model_identity import describe
from magma_core.cli.agent_options import add_agent_options, chat_options_from, judge_options_from
from magma_core.cli.config_file import add_config_option
from magma_core.cli.ctor_args import accept_ctor_args
from magma_core.cli.display import (
    EpisodeProgress,
    failure_lines,
    make_console,
    results_table,
    totals_line,
    traceback_command,
    wrap_clauses,
)
from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.cli.ray_option import add_ray_option, ray_cluster_from
from magma_core.cli.video import VIDEO_CHOICES, add_kind_options, render_run_videos, require_render
from magma_core.text_safety import safe_text
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from rich.console import Console

    from magma_core.runs import RunSpec


def _int_at_least(minimum: int, wording: str):
    """An argparse type: an int >= ``minimum``, with a one-line error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wording}, got {text!r}")
        return value

    return parse


positive_int = _int_at_least(1, "a positive integer")
non_negative_int = _int_at_least(0, "an integer >= 0")


def _float_checked(positive: bool):
    """An argparse type: a finite float > 0 (or >= 0), with a one-line error otherwise."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 if positive else value >= 0) or value == float("inf"):
            raise argparse.ArgumentTypeError(
                f"expected a {'positive' if positive else 'non-negative'} number of seconds, got {text!r}")
        return value

    return parse


positive_float = _float_checked(True)
non_negative_float = _float_checked(False)


def run_name(text: str) -> str:
    from magma_core.runs.spec import check_run_name

    try:
        return check_run_name(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run episodes of a preset or a definition with an agent")
    accept_ctor_args(parser)
    parser.add_argument(
        "preset",
        help="scenario.Preset (e.g. cube.PickPlace) or scenario.Definition (e.g. "
        "sorting.LongSorting: each episode's seed generates its task)",
    )
    parser.add_argument(
        "--agent",
        default="trace",
        help="trace (the preset's reference solution), openai:MODEL[@BASE_URL] or http://HOST:PORT",
    )
    parser.add_argument(
        "--judge",
        default=None,
        help="for presets with judged (JUDGE) stages: openai:MODEL[@BASE_URL], or 'none' to "
        "accept any non-empty answer without a model",
    )
    parser.add_argument("--episodes", type=positive_int, default=1, help="episodes to run (1)")
    parser.add_argument("--slots", type=positive_int, default=1, help="episodes side by side (1)")
    parser.add_argument(
        "--workers", type=positive_int, default=None,
        help="worker processes (with --ray: engine actors), K slots each (1)",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of episode 0 (0)")
    parser.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    parser.add_argument("--name", type=run_name, default=None, help="run name; same name resumes")
    parser.add_argument(
        "--max-decisions", type=positive_int, default=60, help="decision cap per episode (60)"
    )
    parser.add_argument(
        "--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend"
    )
    parser.add_argument(
        "--randomized",
        action="store_true",
        help="each episode's agent sees random public names (of tools, parameters and "
        "objects) drawn from the scenario's randomization YAML",
    )
    add_agent_options(parser)
    add_config_option(parser)
    add_user_option(parser, "episode")
    add_reuse_scenes_option(parser)
    parser.add_argument(
        "--videos", choices=VIDEO_CHOICES, default=None,
        help="also write an mp4 per episode (all, or failures) to OUT/videos/NAME/",
    )
    add_kind_options(parser, prefix="video-")
    parser.add_argument(
        "--observe", action="append", choices=("images",), default=None,
        help="what the agent sees besides text: images puts the world's camera images after "
        "each decision into its input (image parts for openai: agents; needs a render device: "
        "make render); stored with the episode and exported with it",
    )
    parser.add_argument(
        "--record-control", action="store_true",
        help="also store every control step's joint state and commanded action (opt-in: for "
        "robot-learning datasets, magma export --format lerobot; off by default, free when off)",
    )
    parser.add_argument(
        "--concurrency", type=positive_int, default=None,
        help="agent requests in flight at most (default: one per slot)",
    )
    parser.add_argument(
        "--batch-window", type=non_negative_float, default=0.0, metavar="SECONDS",
        help="gather the inputs sent within SECONDS into one request, for batching servers (0)",
    )
    parser.add_argument(
        "--agent-timeout", type=positive_float, default=None, metavar="SECONDS",
        help="seconds for each request to an http/openai agent (the agent's default: 300/120)",
    )
    parser.add_argument(
        "--schedule", choices=("inflight", "lockstep"), default="inflight",
        help="inflight: each slot asks and executes on its own (default); lockstep: all slots "
        "wait for the slowest answer (for comparison)",
    )
    add_skills_option(parser)
    add_ray_option(parser)
    parser.set_defaults(func=run)


def add_reuse_scenes_option(parser: argparse.ArgumentParser, unit: str = "episode") -> None:
    """``--reuse-scenes``: keep each slot's PhysX scene across episodes (see RunSpec.fresh_scenes),
    or across candidates for ``magma gen`` (``unit``)."""
    parser.add_argument("--reuse-scenes", action="store_true",
                        help=f"keep each slot's physics scene across {unit}s: 30-40 ms less per "
                        f"{unit}, but stored world states then depend on which slot ran what before "
                        f"(by default every {unit} starts in a fresh scene: bit-identical worlds)")


def add_user_option(parser: argparse.ArgumentParser, unit: str) -> None:
    """``--user SPEC``: a simulated user puts each ``unit``'s instructions in its words."""
    parser.add_argument("--user", default=None, metavar="SPEC",
                        help=f"a simulated user puts each {unit}'s instructions in its words (seeded by "
                        f"the {unit}'s seed): builtin (no model) or openai:MODEL[@BASE_URL]")


def add_skills_option(parser: argparse.ArgumentParser) -> None:
    """``--skills NAME... | all``: run with the scenario's skills (default: the preset's own)."""
    parser.add_argument(
        "--skills",
        nargs="+",
        metavar="NAME",
        default=None,
        help="run with these skills of the scenario ('all': every one); the agent's tools "
        "become skills, cancel_current_action and the plain tools",
    )


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The ``RunSpec`` the options describe."""
    from magma_core.runs import LoopLimits, Pacing, RunSpec

    return RunSpec(
        target=args.preset,
        agent=args.agent,
        judge=args.judge,
        episodes=args.episodes,
        slots=args.slots,
        workers=args.workers or 1,
        seed=args.seed,
        out=args.out,
        name=args.name,
        limits=LoopLimits(max_decisions=args.max_decisions),
        backend=args.backend,
        randomized=args.randomized,
        agent_options=chat_options_from(args).given(),
        judge_options=judge_options_from(args),
        pacing=Pacing(concurrency=args.concurrency, batch_window=args.batch_window,
                      lockstep=args.schedule == "lockstep"),
        agent_timeout=args.agent_timeout,
        skills=tuple(args.skills) if args.skills else None,
        ray=ray_cluster_from(args, actors=args.workers),
        target_args=dict(getattr(args, "ctor_args", {})),
        user=args.user,
        observe=tuple(args.observe or ()),
        fresh_scenes=not args.reuse_scenes,
        record_control=args.record_control,
    )


class _Display:
    """The run's listener: a warning line, the resume line, then the live progress."""

    def __init__(self, console: Console, out: Path) -> None:
        self.console = console
        self.out = out
        self.progress: EpisodeProgress | None = None

    def on_event(self, event: str, episode: object, payload: object) -> None:
        if event == "warning":
            print(f"magma: warning: {payload}", file=sys.stderr)
        elif event == "notice" and self.progress is None:
            print(f"magma: agent: {payload}", file=sys.stderr)
        elif event == "begin":
            if payload.stored:
                self.console.print(
                    f"resuming run {payload.name!r}: {payload.stored} episode(s) already stored "
                    "(they are kept as they ended; a new --name starts over)"
                )
            if payload.todo:
                command = traceback_command(payload.name, self.out)
                self.progress = EpisodeProgress(self.console, len(payload.todo), command).__enter__()
        elif self.progress is not None:
            self.progress.on_event(event, episode, payload)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.__exit__(None, None, None)
            self.progress = None


def run(args: argparse.Namespace) -> int:
    # Imported here: `magma --help` and the other commands never pay for the engine.
    from magma_core.runs import run as run_spec

    console = make_console()
    if args.observe:
        require_render("--observe images")
    display = _Display(console, args.out)
    try:
        result = run_spec(spec_from_args(args), display.on_event)
    finally:
        display.close()
    console.print(results_table(result.name, result.summaries))
    for line in failure_lines(result.summaries, traceback_command(result.name, args.out)):
        console.print(line, highlight=False)
    totals = totals_line(result.summaries, elapsed_s=result.elapsed_s)
    console.print(wrap_clauses(totals, console.width), highlight=False)
    identity = describe((result.model or {}).get("identity"))
    if identity:  # as `magma bench report` shows it
        console.print(f"  model identity: {identity}", highlight=False, markup=False)
    console.print(f"run store: {result.store_path}  summary: {result.summary_path}")
    if args.videos:
        render_run_videos(args.out, result.name, result.summaries, args.videos, console,
                          args.video_kind, args.motion_frames)
    errors = [s.episode for s in result.summaries if s.status == "error"]
    if errors:
        shown = ", ".join(map(str, errors[:10])) + (", ..." if len(errors) > 10 else "")
        print(f"magma: {len(errors)} of {len(result.summaries)} episodes hit a scenario error "
              f"(episodes {shown}); `magma runs show {result.name} --episode K` shows the "
              "reason and traceback", file=sys.stderr)
    for line in result.failures:  # one line per failed worker
        print(f"magma: error: {safe_text(line)}; run the same command again to resume",
              file=sys.stderr)
    return 0 if result.ok else 1
