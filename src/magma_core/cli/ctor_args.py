"""Constructor arguments on the command line: ``magma run sorting.Preset --difficulty 2``.

An option a command does not know, ``--NAME VALUE`` (or ``--NAME=VALUE``), becomes the
keyword argument ``NAME`` (dashes read as underscores) of the preset's or definition's
constructor, its value cast by :func:`auto_cast`. The commands that take them
(``run``, ``gen``, ``bench compile``, ``test-tools``, ``test-requests``) call
:func:`accept_ctor_args` on their parser; :func:`split_ctor_args` is the one hook in
``magma_core.cli.main``. The names and types are checked against the constructor by
:func:`magma_core.scenarios.construct.check_arguments`, so a mistyped option is still an
error (one line listing the accepted names).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from magma_core.user_error import UserError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_INT = re.compile(r"^[+-]?\d+$")

CTOR_HELP = ("other options, --NAME VALUE, are the constructor's keyword arguments "
             "(true/false, numbers, comma-separated lists, else text)")


def accept_ctor_args(parser: argparse.ArgumentParser) -> None:
    """Let ``parser``'s command take constructor arguments (as ``args.ctor_args``)."""
    parser.set_defaults(ctor_args={}, takes_ctor_args=True)
    parser.allow_abbrev = False  # else `--max 3` would silently be --max-decisions 3
    if parser.epilog is None:
        parser.epilog = CTOR_HELP


def auto_cast(text: str) -> Any:
    """``true``/``false`` -> bool, an integer -> int, a number -> float, ``a,b`` -> a list
    cast item by item, anything else -> the text itself."""
    if "," in text:
        return [auto_cast(item.strip()) for item in text.split(",") if item.strip() != ""]
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT.match(text.strip()):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return text
    if value != value or value in (float("inf"), float("-inf")):
        return text  # 'nan' / 'inf' stay text: a constructor argument is a finite number
    return value


def parse_ctor_args(extras: list[str]) -> dict[str, Any]:
    """``["--difficulty", "2", "--zones=a,b"]`` -> ``{"difficulty": 2, "zones": ["a", "b"]}``."""
    out: dict[str, Any] = {}
    k = 0
    while k < len(extras):
        token = extras[k]
        if not token.startswith("--") or token == "--":
            raise UserError(f"unexpected argument {token!r} (constructor arguments are "
                            "--NAME VALUE)")
        name, has_value, value = token[2:].partition("=")
        if not has_value:
            if k + 1 >= len(extras) or extras[k + 1].startswith("--"):
                raise UserError(f"option --{name} needs a value (constructor arguments are "
                                "--NAME VALUE)")
            value = extras[k + 1]
            k += 1
        k += 1
        if not _NAME.match(name):
            raise UserError(f"--{name} is not a constructor argument name")
        key = name.replace("-", "_")
        if key in out:
            raise UserError(f"--{name} is given twice")
        out[key] = auto_cast(value)
    return out


def split_ctor_args(parser: argparse.ArgumentParser, args: argparse.Namespace,
                    extras: list[str]) -> argparse.Namespace:
    """The hook in ``main``: ``extras`` (what ``parse_known_args`` left) become
    ``args.ctor_args`` for a command that takes them; otherwise the usual one-line error."""
    if not extras:
        return args
    if not getattr(args, "takes_ctor_args", False):
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    try:
        args.ctor_args = parse_ctor_args(extras)
    except UserError as exc:
        parser.error(str(exc))
    return args
