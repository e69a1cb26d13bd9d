"""``magma runs list|show``: read the run store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from magma_core.cli import CliError
from magma_core.cli.display import (
    failure_lines,
    make_console,
    results_table,
    totals_line,
    traceback_command,
    wrap_clauses,
)
from magma_core.cli.out_folder import OUT_HELP, default_out
from magma_core.cli.video import add_video_parser
from magma_core.text_safety import safe_text


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("runs", help="list stored runs or show one")
    actions = parser.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="one line per stored run")
    listing.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    listing.set_defaults(func=_list)
    show = actions.add_parser("show", help="the episodes of a run, or one episode's record")
    show.add_argument("name", help="run name")
    show.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    show.add_argument("--episode", type=int, default=None, help="print this episode's record (JSON)")
    show.add_argument("--step", type=int, default=None,
                      help="with --episode: print only this step, with the exact model request and reply")
    show.add_argument("--traceback", action="store_true",
                      help="with --episode: print only why the episode ended and its traceback")
    show.set_defaults(func=_show)
    export = actions.add_parser("export", help="write a run's episodes or steps as JSON Lines")
    export.add_argument("name", help="run name")
    export.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    export.add_argument("--what", choices=("episodes", "steps"), default="steps",
                        help="one line per episode, or per decision step (default)")
    export.add_argument("--output", type=Path, default=None,
                        help="file to write (default: standard output)")
    export.set_defaults(func=_export)
    add_video_parser(actions)


def _open(out: Path):
    from magma_core.store import open_store

    return open_store(out, create=False)


def agent_label(config: dict) -> str:
    """The agent of a stored run or generation: the model's name (and endpoint) when there
    is one, else the agent spec."""
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    if model.get("name"):
        return f"{model['name']} @ {model.get('endpoint')}"
    return str(config.get("agent") or "?")


def _list(args: argparse.Namespace) -> int:
    from magma_core.store import StoreReader

    with _open(args.out) as store:
        runs = [(run, (store.get_run(run["name"]) or {}).get("config", {})) for run in store.list_runs()]
        path = store.path
    generations = StoreReader(args.out, path).generations()  # none when it has no such table
    table = Table("name", "kind", "target", "agent", "episodes", "successes", "state", title=f"runs in {args.out}")
    for run, config in runs:
        planned = config.get("episodes") if isinstance(config.get("episodes"), int) else None
        done = f"{run['episodes']}/{planned}" if planned is not None else str(run["episodes"])
        kind = "benchmark" if config.get("bench") else "run"
        table.add_row(run["name"], kind, run["preset"], agent_label(config), done, str(run["successes"]),
                      run_state(run["episodes"], planned))
    for generation in generations:
        config = generation.get("config") or {}
        state = "complete" if generation.get("finished") else "incomplete: the same magma gen command resumes it"
        table.add_row(generation["name"], "generation", generation["target"], agent_label(config),
                      f"{config.get('trees', '?')} trees", "", state)
    make_console().print(table)
    return 0


def run_state(done: int, planned: int | None) -> str:
    """``complete``, or how to go on with a run that stopped (killed, interrupted, outage)."""
    if planned is None or done >= planned:
        return "complete"
    return "incomplete: the same magma run command resumes it"


def _show(args: argparse.Namespace) -> int:
    with _open(args.out) as store:
        run = store.get_run(args.name)
        if run is None:
            raise CliError(f"no run named {args.name!r} in {args.out}")
        if args.episode is not None:
            record = store.episode_record(args.name, args.episode)
            if record is None:
                raise CliError(f"run {args.name!r} has no episode {args.episode}")
            if args.traceback:
                print(failure_text(record, args.episode))
            else:
                print(json.dumps(record if args.step is None else _step(record, args), indent=2))
            return 0
        if args.step is not None or args.traceback:
            raise CliError(f"{'--step' if args.step is not None else '--traceback'} needs --episode K")
        summaries = store.episodes(args.name)
    console = make_console()
    console.print(f"preset {run['preset']}  config {json.dumps(run['config'], sort_keys=True)}")
    console.print(results_table(args.name, summaries))
    for line in failure_lines(summaries, traceback_command(args.name, args.out)):
        console.print(line, highlight=False)
    console.print(wrap_clauses(totals_line(summaries), console.width), highlight=False)
    return 0


def failure_text(record: dict, episode: int) -> str:
    """An episode's status, the reason it ended and its traceback, as plain text."""
    status = record.get("status", "?")
    lines = [f"episode {episode}: {status}"]
    if record.get("reason"):
        lines.append(f"reason: {record['reason']}")
    lines.append(str(record.get("traceback") or "").rstrip()
                 or "no traceback: the episode did not end on an error in the scenario")
    return safe_text("\n".join(lines))


def _step(record: dict, args: argparse.Namespace) -> dict:
    """Step ``args.step`` of an episode record, with what the agent kept about it."""
    from magma_core.export.run_jsonl import agent_step

    steps = {s.get("step_index"): s for s in record.get("steps", []) if isinstance(s, dict)}
    if args.step not in steps:
        raise CliError(f"episode {args.episode} of run {args.name!r} has no step {args.step} "
                       f"(steps 0-{len(steps) - 1})" if steps else f"episode {args.episode} has no steps")
    return {**steps[args.step], "agent": agent_step(record, args.step)}


def _export(args: argparse.Namespace) -> int:
    import sys

    from magma_core.export.run_jsonl import export_jsonl

    with _open(args.out) as store:
        if store.get_run(args.name) is None:
            raise CliError(f"no run named {args.name!r} in {args.out}")
        if args.output is None:
            export_jsonl(store, args.name, args.what, sys.stdout)
            return 0
        try:
            handle = args.output.open("w")
        except OSError as exc:
            raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        with handle:
            count = export_jsonl(store, args.name, args.what, handle)
    print(f"wrote {count} {args.what} rows to {args.output}", file=sys.stderr)
    return 0
