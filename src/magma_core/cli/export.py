"""``magma export NAME --format FORMAT``: training data from a stored generation or run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from magma_core.cli import CliError
from magma_core.cli.out_folder import OUT_HELP, default_out


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a ratio in [0, 1), got {text!r}")
    return value


def _score(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="write training data from a generation or a run")
    parser.add_argument("name", help="a generation or run name in the store")
    parser.add_argument("--format", default="chat-jsonl", metavar="NAME",
                        help="an exporter plug-in: chat-jsonl (default), preference-jsonl, hf, or one an "
                        "installed package registers under the entry-point group 'magma.export'")
    parser.add_argument("--out", type=Path, default=default_out(), help=OUT_HELP)
    parser.add_argument("--output", type=Path, default=None, help="folder to write (OUT/exports/NAME-FORMAT)")
    parser.add_argument("--min-score", type=_score, default=0.1, help="drop situations whose best score is at most this (0.1)")
    parser.add_argument("--validation-ratio", type=_ratio, default=0.05, help="share of trees for validation (0.05)")
    parser.add_argument("--split-seed", type=_seed, default=42, help="seed of the train/validation split (42)")
    parser.add_argument("--chat-template", default=None, metavar="SOURCE",
                        help="render chat rows into a 'text' field with a chat template: chatml-tools "
                        "or gemma-tools (shipped, tool-aware), a tokenizer folder, its tokenizer_config.json or a .jinja "
                        "file; rows whose tool calls or results it drops are refused")
    parser.add_argument("--preference-margin", type=_score, default=0.1,
                        help="preference-jsonl: the chosen decision scores more than this above the rejected one (0.1)")
    parser.add_argument("--shuffle-seed", type=_seed, default=42, help="seed of the tool and attribute orders (42)")
    parser.add_argument("--no-coached", action="store_true",
                        help="leave out a generation's coached and recovery candidates (and what grew from them)")
    parser.add_argument("--keep-duplicates", action="store_true",
                        help="keep chat rows whose conversation an earlier row already holds (dropped and "
                        "counted by default)")
    parser.set_defaults(func=export)


def export(args: argparse.Namespace) -> int:
    from magma_core.export import ExportSettings, SourceError, load_forest, write_export
    from magma_core.export.plugins import ExporterError, get_exporter

    try:
        get_exporter(args.format)
    except ExporterError as exc:
        raise CliError(str(exc)) from None
    store = args.out / "magma.db"
    try:
        forest = load_forest(store, args.name, coached=not args.no_coached)
    except SourceError as exc:
        raise CliError(str(exc)) from None
    settings = ExportSettings(format=args.format, min_score=args.min_score,
                              validation_ratio=args.validation_ratio, split_seed=args.split_seed,
                              shuffle_seed=args.shuffle_seed, chat_template=args.chat_template,
                              preference_margin=args.preference_margin,
                              keep_duplicates=args.keep_duplicates)
    output = args.output or args.out / "exports" / f"{args.name}-{args.format}"
    try:
        report = write_export(forest, settings, output)
    except ExporterError as exc:
        raise CliError(str(exc)) from None
    except (OSError, RuntimeError) as exc:
        raise CliError(f"cannot write the export to {output}: {exc}") from None
    for warning in report.warnings:
        print(f"magma: warning: {warning}", file=sys.stderr)
    what = "unchanged, skipped" if report.skipped else "written"
    rows = ", ".join(f"{split} {n}" for split, n in report.rows.items())
    print(f"{args.format} export of {args.name} {what}: {rows} rows in {output} ({len(report.files)} files + manifest.json)")
    return 0
