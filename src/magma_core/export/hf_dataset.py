"""The ``hf`` format's writer: the chat rows as a Hugging Face ``datasets`` dataset in
Parquet, one file per split (``datasets`` is an optional dependency, imported when used)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from magma_core.json_types import JSONDict, JSONValue


def write_hf(output: Path, splits: dict[str, list[JSONDict]]) -> list[Path]:
    """Parquet files readable with ``datasets.load_dataset("parquet", ...)``. Tool schemas
    differ per tool, so ``tools`` and tool-call ``arguments`` are kept as JSON strings; every
    message has a ``weight`` (0 for a masked mistake, else 1: a column needs a value in
    every row), every row its ``origin``, ``kind`` and ``complete``."""
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
                 "tools": json.dumps(r["tools"], sort_keys=True), "origin": r.get("origin", "model"),
                 "kind": r.get("kind", "clean"), "complete": bool(r.get("complete"))}
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


def _message_images(message: JSONDict) -> list[bytes]:
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


def _text_of(content: JSONValue) -> str:
    """A message's text: its content, or its text parts joined (image parts are the row's
    ``images``)."""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


def _flat_message(message: JSONDict) -> JSONDict:
    return {
        "role": message["role"],
        "content": _text_of(message.get("content")),
        "tool_calls": [{"id": c["id"], "type": c["type"], "function": dict(c["function"])}
                       for c in message.get("tool_calls") or []],
        "tool_call_id": message.get("tool_call_id") or "",
        "weight": int(message.get("weight", 1)),
    }


def _HF_FEATURES(datasets: Any, images: bool = False) -> Any:  # noqa: N802 - built lazily
    v = datasets.Value
    call = {"id": v("string"), "type": v("string"),
            "function": {"name": v("string"), "arguments": v("string")}}
    message = {"role": v("string"), "content": v("string"),
               "tool_calls": [call], "tool_call_id": v("string"), "weight": v("int8")}
    features = {"id": v("string"), "messages": [message], "tools": v("string"),
                "origin": v("string"), "kind": v("string"), "complete": v("bool")}
    if images:  # --observe images runs: an Image feature per image shown, in order
        features["images"] = datasets.Sequence(datasets.Image())
    return datasets.Features(features)
