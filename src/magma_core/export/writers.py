"""Writing an export: rows per format, a train/validation split by tree, a manifest of hashes.

Formats are exporter plug-ins (:mod:`magma_core.export.plugins`); the built-in ones: ``chat-jsonl`` (one conversation per kept path; a path
whose conversation an earlier row already holds is dropped and counted, unless
``keep_duplicates``), ``preference-jsonl`` (chosen /
rejected sibling decisions of one situation: the prompt, the two assistant turns, the tools)
and ``hf`` (the chat rows as a Hugging Face ``datasets`` dataset in Parquet, one file per
split). ``manifest.json`` holds the settings, the counts, the split and the SHA-256 of every
file; an export whose sources and settings are unchanged and whose files are intact is
skipped.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from magma_core import __version__
from magma_core.export.chat import assistant_for, conversation, model_view
from magma_core.export.chat_template import ChatTemplate
from magma_core.export.plugins import ExporterError, get_exporter, producer_of
from magma_core.export.rows import ExportForest
from magma_core.store import scores as sc

FORMATS = ("chat-jsonl", "preference-jsonl", "hf")
MANIFEST = "manifest.json"


@dataclass
class ExportSettings:
    """What shapes an export (all of it goes into the manifest's signature)."""

    format: str = "chat-jsonl"
    min_score: float = sc.MIN_BEST_SCORE
    validation_ratio: float = 0.05
    split_seed: int = 42
    shuffle_seed: int = 42
    preference_margin: float = sc.KEEP_MARGIN
    chat_template: str | None = None  # render chat rows into "text" (see export.chat_template)
    keep_duplicates: bool = False  # keep chat rows whose conversation an earlier row has


class Notice(str):
    """A ``refused`` entry that is no refusal, only a line for the export's warnings."""


class Duplicate(str):
    """A ``refused`` entry (``"id: duplicate of id"``) of a chat row dropped because an
    earlier row holds the same conversation; counted apart from the template's refusals."""


@dataclass
class ExportReport:
    """What an export wrote (or found unchanged)."""

    output: Path
    skipped: bool
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # name -> sha256
    warnings: list[str] = field(default_factory=list)
    duplicates_dropped: int = 0


def chat_rows(forest: ExportForest, settings: ExportSettings,
              refused: list[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(group, row)`` per kept path, and per validated coaching repair the path through it
    (also when the failed decision above it was not kept: the row teaches the recovery); with
    ``settings.chat_template`` each row gets its rendered ``text``, and a row the template would
    damage is left out (its id and the reason go to ``refused``)."""
    kept, _ = forest.selected(settings.min_score)
    template = ChatTemplate(settings.chat_template) if settings.chat_template else None
    rows = []
    paths = list(forest.kept_paths(kept))
    ends = {p[-1][1].key for p in paths}
    for chosen in sorted({a for a, _ in forest.repairs}):
        path = forest.path_through(chosen, kept)
        if path[-1][1].key not in ends:
            ends.add(path[-1][1].key)
            paths.append(path)
    seen: dict[str, str] = {}
    for path in paths:
        key = path[-1][1].key
        if not settings.keep_duplicates:
            same = seen.setdefault(conversation_identity(path, forest), key)
            if same != key:
                if refused is not None:
                    refused.append(Duplicate(f"{key}: duplicate of {same}"))
                continue
        messages, tools = conversation(path, settings.shuffle_seed, key, **model_view(forest))
        origins = {c.origin for _, c in path}
        origin = next((o for o in ("recovery", "coached") if o in origins), "model")
        row = {"id": key, "messages": messages, "tools": tools, "origin": origin}
        if template is not None:
            text, reason = template.render(row)
            if text is None:
                if refused is not None:
                    refused.append(f"{key}: {reason}")
                continue
            row["text"] = text
        rows.append((path[0][0].group, row))
    if template is not None and template.objects_used and refused is not None:
        refused.append(Notice(f"chat template {settings.chat_template} double-encodes string tool-call "
                              f"arguments: the text of {template.objects_used} row(s) is rendered with "
                              "the arguments as objects (train on 'text', or give the tokenizer objects)"))
    return rows


def conversation_identity(path: list[Any], forest: ExportForest) -> str:
    """What makes two paths the same conversation: their messages and tools rendered with
    one fixed order (not the per-row shuffle), hashed."""
    messages, tools = conversation(path, 0, "identity", **model_view(forest))
    return hashlib.sha256(json.dumps([messages, tools], sort_keys=True, default=str).encode()).hexdigest()


def preference_rows(forest: ExportForest, settings: ExportSettings) -> list[tuple[str, dict[str, Any]]]:
    """``(group, row)`` per pair of siblings where the chosen one is kept and scores more than
    ``preference_margin`` above the rejected one (different decisions only), and one per
    validated coaching repair (``origin: "repair"``: the repair chosen, the failed decision
    rejected, same prompt)."""
    kept, scores = forest.selected(settings.min_score)
    repairs = {f"{a}>{b}" for a, b in forest.repairs}
    pairs = set(forest.repairs)
    repaired = {a for a, _ in forest.repairs}
    rows = []
    for situation, candidates in sorted(forest.children().items()):
        usable = sorted((c for c in candidates if c.decision is not None), key=lambda c: c.key)
        path = [*forest.path_to(situation)]
        for chosen in usable:
            if chosen.key not in kept and chosen.key not in repaired:
                continue
            for rejected in usable:
                if rejected.decision == chosen.decision:
                    continue
                repair = (chosen.key, rejected.key) in pairs
                if not repair and scores[rejected.key] >= scores[chosen.key] - settings.preference_margin:
                    continue
                key = f"{chosen.key}>{rejected.key}"
                steps = [*path, (forest.situations[situation], chosen)]
                prompt, tools = conversation(steps, settings.shuffle_seed, key, last_assistant=False,
                                             **model_view(forest))
                rows.append((forest.situations[situation].group, {
                    "id": key,
                    "prompt": prompt,
                    "chosen": [assistant_for(steps, chosen, settings.shuffle_seed, key)],
                    "rejected": [assistant_for(steps, rejected, settings.shuffle_seed, key)],
                    "tools": tools,
                    "score_chosen": round(scores[chosen.key], 6),
                    "score_rejected": round(scores[rejected.key], 6),
                    "origin": "repair" if key in repairs else chosen.origin,
                }))
    return rows


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
                            len(duplicates))
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
        "split": {"train": train_groups, "validation": validation_groups},
        "files": files,
    }
    tmp = output / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    tmp.replace(output / MANIFEST)
    return ExportReport(output, False, manifest["rows"], files, warnings, len(duplicates))


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


def _write_hf(output: Path, splits: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Parquet files readable with ``datasets.load_dataset("parquet", ...)``. Tool schemas
    differ per tool, so ``tools`` and tool-call ``arguments`` are kept as JSON strings."""
    try:
        import datasets
    except ImportError as exc:  # an optional dependency
        raise RuntimeError("the hf format needs the 'datasets' package: pip install datasets") from exc
    datasets.disable_progress_bars()
    paths = []
    folder = output / "hf"
    folder.mkdir(parents=True, exist_ok=True)
    with_images = any(_message_images(m) for rows in splits.values() for r in rows
                      for m in r["messages"])
    for split, rows in splits.items():
        flat = [{"id": r["id"], "messages": [_flat_message(m) for m in r["messages"]],
                 "tools": json.dumps(r["tools"], sort_keys=True), "origin": r.get("origin", "model")}
                for r in rows]
        if with_images:  # the camera images of --observe images, in the order they were shown
            for row, r in zip(flat, rows, strict=True):
                row["images"] = [{"bytes": b, "path": None}
                                 for m in r["messages"] for b in _message_images(m)]
        path = folder / f"{split}.parquet"
        features = _HF_FEATURES(datasets, with_images)
        data = (datasets.Dataset.from_list(flat, features=features) if flat  # an empty split too
                else datasets.Dataset.from_dict({k: [] for k in features}, features=features))
        data.to_parquet(str(path))
        paths.append(path)
    return paths


def _message_images(message: dict[str, Any]) -> list[bytes]:
    """The image bytes of a message's ``image_url`` data-URL content parts."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
        if url.startswith("data:") and ";base64," in url:
            out.append(base64.b64decode(url.split(";base64,", 1)[1]))
    return out


def _text_of(content: Any) -> str:
    """A message's text: its content, or its text parts joined (image parts are the row's
    ``images``)."""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


def _flat_message(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": message["role"],
        "content": _text_of(message.get("content")),
        "tool_calls": [{"id": c["id"], "type": c["type"], "function": dict(c["function"])}
                       for c in message.get("tool_calls") or []],
        "tool_call_id": message.get("tool_call_id") or "",
    }


def _HF_FEATURES(datasets: Any, images: bool = False) -> Any:  # noqa: N802 - built lazily
    v = datasets.Value
    call = {"id": v("string"), "type": v("string"),
            "function": {"name": v("string"), "arguments": v("string")}}
    message = {"role": v("string"), "content": v("string"),
               "tool_calls": [call], "tool_call_id": v("string")}
    features = {"id": v("string"), "messages": [message], "tools": v("string"),
                "origin": v("string")}
    if images:  # --observe images runs: an Image feature per image shown, in order
        features["images"] = datasets.Sequence(datasets.Image())
    return datasets.Features(features)
