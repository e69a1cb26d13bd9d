"""MkDocs hook: the command-line reference is the ``magma`` parser's own help, at build time.

``docs/reference/cli.md`` holds the marker ``<!-- magma-help -->``; it is replaced by one
section per command and subcommand with its ``--help`` text, so the page never drifts from
the code. A command added to ``magma_core.cli`` appears here by itself.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- magma-help -->"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps subparsers in a private list
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _sections(parser: argparse.ArgumentParser, words: list[str], level: int) -> list[str]:
    heading = "#" * level + " `" + " ".join(words) + "`"
    out = [heading, "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in _subcommands(parser).items():
        out += _sections(sub, [*words, name], min(level + 1, 4))
    return out


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    os.environ["COLUMNS"] = "100"  # argparse wraps help text to the terminal width
    from magma_core.cli import build_parser

    parser = build_parser()
    return markdown.replace(MARKER, "\n".join(_sections(parser, ["magma"], 2)))
