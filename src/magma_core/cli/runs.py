"""``magma runs list|show``: read the run store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from magma_core.cli import CliError
from magma_core.cli.display import make_console, results_table, totals_line
from magma_core.cli.video import add_video_parser


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("runs", help="list stored runs or show one")
    actions = parser.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="one line per stored run")
    listing.add_argument("--out", type=Path, default=Path("runs"), help="run store folder (runs)")
    listing.set_defaults(func=_list)
    show = actions.add_parser("show", help="the episodes of a run, or one episode's record")
    show.add_argument("name", help="run name")
    show.add_argument("--out", type=Path, default=Path("runs"), help="run store folder (runs)")
    show.add_argument("--episode", type=int, default=None, help="print this episode's record (JSON)")
    show.set_defaults(func=_show)
    export = actions.add_parser("export", help="write a run's episodes or steps as JSON Lines")
    export.add_argument("name", help="run name")
    export.add_argument("--out", type=Path, default=Path("runs"), help="run store folder (runs)")
    export.add_argument("--what", choices=("episodes", "steps"), default="steps",
                        help="one line per episode, or per decision step (default)")
    export.add_argument("--output", type=Path, default=None,
                        help="file to write (default: standard output)")
    export.set_defaults(func=_export)
    add_video_parser(actions)


def _open(out: Path):
    from magma_core.store import open_store

    return open_store(out, create=False)


def _list(args: argparse.Namespace) -> int:
    with _open(args.out) as store:
        runs = store.list_runs()
    table = Table("run", "preset", "episodes", "successes", title=f"runs in {args.out}")
    for run in runs:
        table.add_row(run["name"], run["preset"], str(run["episodes"]), str(run["successes"]))
    make_console().print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    with _open(args.out) as store:
        run = store.get_run(args.name)
        if run is None:
            raise CliError(f"no run named {args.name!r} in {args.out}")
        if args.episode is not None:
            record = store.episode_record(args.name, args.episode)
            if record is None:
                raise CliError(f"run {args.name!r} has no episode {args.episode}")
            print(json.dumps(record, indent=2))
            return 0
        summaries = store.episodes(args.name)
    console = make_console()
    console.print(f"preset {run['preset']}  config {json.dumps(run['config'], sort_keys=True)}")
    console.print(results_table(args.name, summaries))
    console.print(totals_line(summaries))
    return 0


def _export(args: argparse.Namespace) -> int:
    import sys

    from magma_core.runs.export import export_jsonl

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
