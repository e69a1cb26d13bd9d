"""``magma bench compile|run|report``: frozen suites, resumable benchmark runs, reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.cli.agent_options import add_agent_options, chat_options_from, judge_options_from
from magma_core.cli.config_file import add_config_option
from magma_core.cli.ctor_args import accept_ctor_args
from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.cli.ray_option import add_ray_option, ray_cluster_from
from magma_core.cli.run import (
    add_reuse_scenes_option,
    add_skills_option,
    add_user_option,
    non_negative_int,
    positive_int,
    run_name,
)
from magma_core.cli.video import VIDEO_CHOICES
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from rich.console import Console


def _price(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a price in currency per million tokens, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a price is >= 0")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="benchmark an agent: compile a suite, run it, report")
    bench = parser.add_subparsers(dest="bench_command", metavar="STEP", parser_class=type(parser))
    p = bench.add_parser("compile", help="freeze a suite spec (YAML, or a shipped suite's name) into a folder")
    p.add_argument("spec", help="suite spec YAML, or the name of a suite a scenario ships (smoke, sorting, "
                   "kitchen, warehouse, buttons, ...: magma scenarios show NAME lists them)")
    p.add_argument("--out", type=Path, required=True, help="the new suite folder")
    accept_ctor_args(p)
    p.set_defaults(func=compile_command)
    p = bench.add_parser("run", help="run every item of a compiled suite K times (resumable)")
    p.add_argument("suite", type=Path, help="a compiled suite folder")
    p.add_argument("--agent", default="trace",
                   help="trace, noisy-trace[:P], openai:MODEL[@BASE_URL] or http://HOST:PORT")
    p.add_argument("--judge", default=None, help="none or openai:MODEL[@BASE_URL] for judged stages")
    p.add_argument("--trials", type=positive_int, default=1, help="trials per item K (1)")
    p.add_argument("--slots", type=positive_int, default=1,
                   help="trials side by side in one engine, across items (1)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="worker processes (with --ray: engine actors), --slots trials each (1)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of trial 0 (0)")
    p.add_argument("--name", type=run_name, default=None, help="benchmark run name; same name resumes")
    p.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend")
    p.add_argument("--max-decisions", type=positive_int, default=None,
                   help="decision cap per trial (default: magma run's, 60)")
    p.add_argument("--videos", choices=VIDEO_CHOICES, default=None,
                   help="also write an mp4 per trial (all, or failures) to OUT/videos/bench.NAME/")
    add_camera_options(p)
    add_agent_options(p)
    add_config_option(p)
    add_user_option(p, "trial")
    add_reuse_scenes_option(p)
    add_skills_option(p)
    add_ray_option(p)
    p.set_defaults(func=run_command)
    p = bench.add_parser("report", help="metrics of benchmark runs: tables, --html, --json")
    p.add_argument("name", help="benchmark run name")
    p.add_argument("--compare", nargs="+", default=[], metavar="OTHER", help="runs to put side by side")
    p.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    p.add_argument("--html", type=Path, default=None, help="write one self-contained HTML page")
    p.add_argument("--json", type=Path, default=None, help="write the metrics as JSON")
    prices = p.add_mutually_exclusive_group()
    prices.add_argument("--price-per-mtok", type=_price, default=None,
                        help="price per million agent tokens, for the cost rows")
    prices.add_argument("--prices", type=Path, default=None, metavar="FILE",
                        help="price table (YAML/JSON): model -> {input, output} per million tokens")
    p.set_defaults(func=report_command)
    parser.set_defaults(func=lambda args: parser.print_help() or 0)


def compile_command(args: argparse.Namespace) -> int:
    from magma_core.bench.suite import compile_suite, load_suite

    manifest = compile_suite(args.spec, args.out, getattr(args, "ctor_args", {}))
    suite = load_suite(manifest.parent)
    print(f"suite {suite.name}: {len(suite.items)} items in {args.out} "
          f"(fingerprint {suite.fingerprint[:12]})")
    return 0


def run_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from magma_core.bench.runner import BenchSpec, run_bench

    console = Console(stderr=True)

    def progress(event: str, payload: JSONDict) -> None:
        if event == "trial":
            console.print(f"{payload['item']} trial {payload['trial']}: {payload['status']}")
        elif event == "outage":
            console.print(f"[yellow]{payload['item']}: attempt {payload['attempts']} lost: {payload['error']}")
        elif event == "notice":
            console.print(f"agent: {payload['line']}", highlight=False, markup=False)
        elif event == "given_up":
            console.print(f"[red]{payload['item']}: given up after 3 infrastructure failures")

    from magma_core.runs import LoopLimits

    limits = LoopLimits() if args.max_decisions is None else LoopLimits(max_decisions=args.max_decisions)
    spec = BenchSpec(args.suite, limits=limits, agent=args.agent, judge=args.judge, trials=args.trials,
                     slots=args.slots, workers=args.workers or 1, seed=args.seed, out=args.out,
                     ray=ray_cluster_from(args, actors=args.workers), observe=observe_of(args),
                     fresh_scenes=not args.reuse_scenes,
                     name=args.name, backend=args.backend,
                     agent_options=chat_options_from(args).given(), judge_options=judge_options_from(args),
                     skills=tuple(args.skills) if args.skills else None, user=args.user)
    result = run_bench(spec, progress)
    print(f"bench run {result.name}: {result.ran} trials run, {result.resumed} resumed, "
          f"{len(result.given_up)} items given up, {result.elapsed_s:.1f}s; store {result.store_path}")
    if args.videos:
        write_trial_videos(args.out, result.name, args.videos, console, args.video_kind,
                           args.motion_frames)
    print(f"report: magma bench report {result.name} --out {args.out}")
    if result.errors:
        print(f"magma: {result.errors} trial(s) of {result.name} hit a scenario error (status "
              "error); the report's statuses and each trial's record say where", file=sys.stderr)
    return 1 if result.given_up or result.errors else 0


def add_camera_options(p: argparse.ArgumentParser) -> None:
    """``--video-kind``, ``--motion-frames`` and ``--observe`` of ``magma bench run``."""
    from magma_core.cli.video import add_kind_options

    add_kind_options(p, prefix="video-")
    p.add_argument("--observe", action="append", choices=("images",), default=None,
                   help="images: each trial's agent also gets the world's camera images after each "
                   "decision (needs a render device: make render)")


def observe_of(args: argparse.Namespace) -> tuple[str, ...]:
    """The trials' ``--observe`` (refused in one line when nothing can render here)."""
    if not args.observe:
        return ()
    from magma_core.cli.video import require_render

    require_render("--observe images")
    return tuple(args.observe)


def write_trial_videos(out: Path, name: str, which: str, console: Console, kind: str = "schematic",
                       motion_frames: int | None = None) -> list[Path]:
    """An mp4 per stored trial of benchmark run ``name`` (``all``, or ``failures``: those that
    did not succeed) at ``OUT/videos/bench.NAME/ITEM.tK.mp4``, made by ``magma run
    --videos``' code (``kind``: see ``cli.video.video_kind``; a rendered trial's world is its
    item's task); a trial already written is kept."""
    from magma_core.render.rendered import RunCameras
    from magma_core.render.video import MOVE, VideoError
    from magma_core.runs.videos import default_video_path, write_episode_video
    from magma_core.store.bench_store import bench_run_name, open_bench_store, trial_of

    run = bench_run_name(name)
    with open_bench_store(out, create=False) as store:
        config = (store.get_bench(name) or {}).get("config", {})
        chosen = [s.episode for s in store.episodes(run) if which == "all" or s.status != "success"]
    items, trials = config.get("items", []), config.get("trials", 1)
    from magma_core.cli.video import say_note, video_kind

    kind = video_kind(kind, console) if chosen else "schematic"
    cameras, suite_items = None, None
    if kind == "rendered":
        cameras = RunCameras()
    written = []
    try:
        for episode in chosen:
            position, k = trial_of(episode, trials)
            item_id = items[position]["item_id"] if position < len(items) else f"episode-{episode}"
            path = default_video_path(out, run, episode).with_name(f"{item_id}.t{k}.mp4")
            if path.exists():
                continue
            try:
                world = None
                if cameras is not None:
                    suite_items = suite_items or _suite_items(config)
                    world = _item_world(suite_items, position)
                write_episode_video(out, run, episode, path, kind=kind, cameras=cameras,
                                    world=world,
                                    motion_frames=MOVE if motion_frames is None else motion_frames)
            except (VideoError, OSError) as exc:
                say_note(console, f"no video for {item_id} trial {k}: {exc}")
                continue
            console.print(f"video: {path}")
            written.append(path)
    finally:
        if cameras is not None:
            cameras.close()
    return written


def _suite_items(config: JSONDict) -> list[JSONDict]:
    from magma_core.bench.suite import load_suite
    from magma_core.render.video import VideoError

    try:
        return list(load_suite(config.get("suite_dir", "")).items)
    except Exception as exc:  # the suite folder moved or is gone
        raise VideoError(f"cannot read the suite to render its trials: {exc}") from None


def _item_world(items: list[JSONDict], position: int) -> tuple[str, dict, dict]:
    from magma_core.bench.task_spec import task_from_spec
    from magma_core.render.rendered import world_of_task
    from magma_core.render.video import VideoError

    try:
        return world_of_task(task_from_spec(items[position]["task"]))
    except (IndexError, KeyError, TypeError, ValueError) as exc:
        raise VideoError(f"cannot rebuild trial {position}'s world: {exc}") from None


def report_command(args: argparse.Namespace) -> int:
    from magma_core.bench.prices import read_prices
    from magma_core.bench.report import bench_report, print_report, write_html, write_json

    table = None if args.prices is None else read_prices(args.prices)
    reports = bench_report(args.out, [args.name, *args.compare], args.price_per_mtok, table)
    print_report(reports)
    if args.html:
        print(f"html: {write_html(reports, args.html)}")
    if args.json:
        print(f"json: {write_json(reports, args.json)}")
    return 0
