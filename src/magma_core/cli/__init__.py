"""The ``magma`` command. Each subcommand lives in its own module with a ``register`` hook.

Errors the user can fix (bad options, unknown preset, unreachable agent) print one line to
stderr and exit with status 2, without a traceback: the command line's own and every
:class:`~magma_core.user_error.UserError` raised below it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from magma_core import __version__
from magma_core.user_error import UserError

# Subcommand modules, in help order. Each defines ``register(subparsers) -> None`` and sets
# ``func(args) -> int`` on its parser via ``set_defaults``.
SUBCOMMANDS = (
    "magma_core.cli.run",
    "magma_core.cli.gen",
    "magma_core.cli.bench",
    "magma_core.cli.export",
    "magma_core.cli.runs",
    "magma_core.cli.store",
    "magma_core.cli.scenarios",
    "magma_core.cli.tool_tester",
    "magma_core.cli.serve_agent",
    "magma_core.cli.serve_model",
    "magma_core.cli.view",
    "magma_core.cli.new",
)


#: The command line's name for :class:`UserError` (the same class).
CliError = UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, non-zero exit
        self.exit(2, f"magma: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="magma", description="Run language agents on simulated robot tasks.")
    parser.add_argument("--version", action="version", version=f"magma {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in SUBCOMMANDS:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from magma_core.cli.config_file import expand_config
    from magma_core.cli.ctor_args import split_ctor_args

    parser = build_parser()
    try:
        argv = expand_config(parser, sys.argv[1:] if argv is None else argv)  # --config FILE
    except UserError as exc:
        print(f"magma: error: {exc}", file=sys.stderr)
        return 2
    args, extras = parser.parse_known_args(argv)
    args = split_ctor_args(parser, args, extras)  # --NAME VALUE: constructor arguments
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"magma: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("magma: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `magma runs export NAME | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        from magma_core.store.sqlite import is_store_fault

        if not is_store_fault(exc):
            raise
        print(f"magma: error: the store failed ({exc}); what is stored stays: magma store "
              "check --out FOLDER says more", file=sys.stderr)  # a store fault: still one line
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
