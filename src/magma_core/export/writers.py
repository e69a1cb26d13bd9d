"""Writing an export: rows per format, a train/validation split by tree, a manifest of hashes.

Formats are exporter plug-ins (:mod:`magma_core.export.plugins`); the built-in ones, whose rows
:mod:`.row_builders` builds: ``chat-jsonl`` (one conversation per kept path; a path
whose conversation an earlier row already holds is dropped and counted, unless
``keep_duplicates``), ``preference-jsonl`` (chosen /
rejected sibling decisions of one situation: the prompt, the two assistant turns, the tools)
and ``hf`` (:mod:`.hf_dataset`: the chat rows as a Hugging Face ``datasets`` dataset in Parquet, one file per
split). ``manifest.json`` holds the settings, the counts (for chat rows also per ``kind``:
rows, distinct dialogues, trees, complete rows and masked turns, :func:`.kinds.kind_counts`),
the split and the SHA-256 of every file; an export whose sources and settings are unchanged and
whose files are intact is skipped.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from magma_core import __version__
from magma_core.export.exporter import ExporterError, producer_of
from magma_core.export.kinds import kind_counts
from magma_core.export.plugins import get_exporter
from magma_core.export.row_builders import chat_rows, conversation_identity, preference_rows
from magma_core.export.rows import ExportForest
from magma_core.export.settings import Duplicate, ExportSettings, Notice

__all__ = ["FORMATS", "MANIFEST", "ExportReport", "ExportSettings", "chat_rows", "conversation_identity",
           "preference_rows", "split_groups", "split_warning", "validation_count", "write_export"]

FORMATS = ("chat-jsonl", "preference-jsonl", "hf")
MANIFEST = "manifest.json"


@dataclass
class ExportReport:
    """What an export wrote (or found unchanged)."""

    output: Path
    skipped: bool
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # name -> sha256
    warnings: list[str] = field(default_factory=list)
    duplicates_dropped: int = 0
    #: per kind of chat row (:func:`~magma_core.export.kinds.kind_counts`); empty for other rows
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)


def split_warning(count: int, ratio: float) -> str | None:
    """Why ``count`` trees at validation ratio ``ratio`` give no validation split (None when
    they give one, or when none was asked for)."""
    if ratio <= 0 or count <= 1 or validation_count(count, ratio) > 0:
        return None
    return (f"validation ratio {ratio:g} of {count} trees rounds to no validation tree: every tree "
            f"goes to train (a validation split needs at least {math.ceil(0.5 / ratio)} trees at this ratio)")


def validation_count(n: int, ratio: float) -> int:
    """Validation groups of ``n``: ``n × ratio`` rounded half up, at most n − 1 (so a tiny
    generation never sends half of itself to validation)."""
    return 0 if n <= 1 or ratio <= 0 else min(n - 1, math.floor(n * ratio + 0.5))


def split_groups(groups: list[str], ratio: float, seed: int) -> tuple[list[str], list[str]]:
    """``(train, validation)`` groups: :func:`validation_count` validation groups drawn with
    ``seed`` (none from a single group, nor when ``n × ratio`` rounds to 0)."""
    groups = sorted(set(groups))
    n = len(groups)
    count = validation_count(n, ratio)
    order = groups[:]
    random.Random(seed).shuffle(order)
    validation = sorted(order[:count])
    return [g for g in groups if g not in validation], validation


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_export(forest: ExportForest, settings: ExportSettings, output: Path) -> ExportReport:
    """Write ``forest`` in ``settings.format`` under the folder ``output`` (see the module):
    the format is an exporter plug-in (:mod:`magma_core.export.plugins`), which must accept
    every source's producer (:class:`~magma_core.export.plugins.ExporterError` otherwise)."""
    exporter = get_exporter(settings.format)
    for source in forest.sources:
        refusal = exporter.check_producer(*producer_of(source))
        if refusal:
            raise ExporterError(f"{source.get('name', 'the source')}: {refusal}")
    refused: list[str] = []
    rows = exporter.rows(forest, settings, refused)
    source_digest = hashlib.sha256(
        json.dumps([forest.sources, [r for _, r in rows]], sort_keys=True, default=str).encode()
    ).hexdigest()
    signature = hashlib.sha256(json.dumps(
        {"source": source_digest, "settings": settings.__dict__, "producer": __version__}, sort_keys=True
    ).encode()).hexdigest()
    warning = split_warning(len({g for g, _ in rows}), settings.validation_ratio)
    warnings = [warning] if warning else []
    if not rows and exporter.explain_empty is not None:
        warnings.append(exporter.explain_empty(forest, settings))
    duplicates = [r for r in refused if isinstance(r, Duplicate)]
    warnings += [str(r) for r in refused if isinstance(r, Notice)]
    refused = [r for r in refused if not isinstance(r, (Duplicate, Notice))]
    if duplicates:
        warnings.append(f"dropped {len(duplicates)} duplicate conversation(s) (the same messages "
                        f"and tools as an earlier row, e.g. {duplicates[0]}); --keep-duplicates "
                        "keeps them")
    if refused:
        warnings.append(f"{len(refused)} rows refused by chat template {settings.chat_template}: {refused[0]}"
                        + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""))
    if _unchanged(output, signature):
        manifest = json.loads((output / MANIFEST).read_text())
        return ExportReport(output, True, manifest["rows"], manifest["files"], warnings,
                            len(duplicates), manifest.get("kinds") or {})
    output.mkdir(parents=True, exist_ok=True)
    train_groups, validation_groups = split_groups([g for g, _ in rows], settings.validation_ratio,
                                                   settings.split_seed)
    splits = {"train": [r for g, r in rows if g not in validation_groups],
              "validation": [r for g, r in rows if g in validation_groups]}
    stem = exporter.stem or exporter.name
    written: list[Path] = []
    if exporter.write is not None:
        written = exporter.write(output, splits)
    else:
        for split, split_rows in splits.items():
            path = output / f"{stem}_{split}.jsonl"
            with open(path, "w", encoding="utf-8") as handle:
                for row in split_rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            written.append(path)
    files = {str(p.relative_to(output)): sha256_file(p) for p in written}
    manifest = {
        "producer": {"package": "magma", "version": __version__},
        "exporter": exporter.name,
        "complete": True,
        "signature": signature,
        "source_sha256": source_digest,
        "sources": forest.sources,
        "settings": settings.__dict__,
        "rows": {split: len(r) for split, r in splits.items()},
        "duplicates_dropped": len(duplicates),
        **({"kinds": kind_counts(rows)} if exporter.kinds or any("kind" in r for _, r in rows) else {}),
        "split": {"train": train_groups, "validation": validation_groups},
        "files": files,
    }
    tmp = output / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    tmp.replace(output / MANIFEST)
    return ExportReport(output, False, manifest["rows"], files, warnings, len(duplicates),
                        manifest.get("kinds") or {})


def _unchanged(output: Path, signature: str) -> bool:
    path = output / MANIFEST
    if not path.exists():
        return False
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("signature") != signature or not manifest.get("complete"):
        return False
    files = manifest.get("files") or {}
    return all((output / name).is_file() and sha256_file(output / name) == digest
               for name, digest in files.items())
