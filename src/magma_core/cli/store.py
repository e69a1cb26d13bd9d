"""``magma store check|backup``: is a store sound, and a consistent copy of it (both read only)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from magma_core.cli.out_folder import OUT_HELP, default_out


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("store", help="check a run store or back it up")
    commands = parser.add_subparsers(dest="store_command", metavar="COMMAND")
    check = commands.add_parser("check", help="integrity, version and tables of OUT/magma.db")
    check.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(func=check_command)
    backup = commands.add_parser("backup", help="copy OUT/magma.db to DEST (SQLite's online "
                                 "backup: consistent even while a command writes)")
    backup.add_argument("dest", type=Path, help="the new backup file")
    backup.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    backup.set_defaults(func=backup_command)
    parser.set_defaults(func=lambda args: parser.print_help() or 0)


def check_command(args: argparse.Namespace) -> int:
    from magma_core.store import STORE_FILE
    from magma_core.store.maintenance import check_store

    report = check_store(args.out / STORE_FILE)
    if args.json:
        print(json.dumps(report, indent=2))
    elif report["ok"]:
        tables = ", ".join(f"{t} {n}" for t, n in report["tables"].items())
        print(f"{report['path']}: ok, store version {report['version']}; rows: {tables}")
    else:
        for problem in report["problems"]:
            print(f"{report['path']}: {problem}")
        print("restore the store from a backup (magma store backup DEST makes one) or choose "
              "another --out folder")
    return 0 if report["ok"] else 1


def backup_command(args: argparse.Namespace) -> int:
    from magma_core.store import STORE_FILE
    from magma_core.store.maintenance import backup_store

    dest = backup_store(args.out / STORE_FILE, args.dest)
    print(f"backed up {args.out / STORE_FILE} to {dest}")
    return 0
