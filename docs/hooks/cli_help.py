"""MkDocs hook: the command-line reference is the ``magma`` parser's own help, at build time.

``docs/reference/cli.md`` holds the marker ``<!-- magma-help -->`` and, up to
``<!-- /magma-help -->``, one section per command and subcommand with its ``--help`` text
(written into the repository by ``reference_markdown.py``, so it reads there too); the
build writes the block again, so the site never drifts from the code. A command added to ``magma_core.cli`` appears here by itself.
"""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- magma-help -->"
END = "<!-- /magma-help -->"


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


def help_markdown() -> str:
    """Every command's ``--help`` as Markdown sections (what the marker's block holds)."""
    os.environ["COLUMNS"] = "100"  # argparse wraps help text to the terminal width
    from magma_core.cli import build_parser

    return "\n".join(_sections(build_parser(), ["magma"], 2))


def with_help(markdown: str) -> str:
    """``markdown`` with the block from the marker to ``<!-- /magma-help -->`` (or the bare
    marker) holding :func:`help_markdown`."""
    block = f"{MARKER}\n\n{help_markdown()}\n{END}"
    if END in markdown:
        start, end = markdown.index(MARKER), markdown.index(END) + len(END)
        return markdown[:start] + block + markdown[end:]
    return markdown.replace(MARKER, block)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return with_help(markdown)
