"""The viewer's home list: every stored thing people look at, whatever its kind.

Each kind (runs, benchmark results, generations) contributes rows through one lister. A row is a plain dict with the same keys for every kind,
so the list page draws all kinds in one table and links each row to its kind's page::

    {"kind": "run", "id": "demo", "title": "demo", "subtitle": "scenario.Preset",
     "agent": "trace", "state": "complete", "counts": {...}, "created_at": ..,
     "updated_at": .., "href": "#/runs/demo"}

Adding a kind is one ``ItemKind`` in :data:`KINDS` with a lister over the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from magma_core.json_types import JSONDict
from magma_core.store.reader import StoreReader
from magma_core.view.benchmarks import bench_items, bench_run_names
from magma_core.view.generations import generation_items


@dataclass(frozen=True)
class ItemKind:
    """One kind of stored item: its key, its label in the list and how to list it."""

    kind: str
    label: str
    list_items: Callable[[StoreReader], list[JSONDict]]


def run_items(reader: StoreReader) -> list[JSONDict]:
    """One list row per stored run (but the runs holding benchmark trials: their benchmark's
    row and page show them)."""
    items = []
    hidden = bench_run_names(reader)
    for run in reader.runs():
        if run["name"] in hidden:
            continue
        items.append(
            {
                "kind": "run",
                "id": run["name"],
                "title": run["name"],
                "subtitle": run["preset"],
                "agent": run["agent"],
                "state": run["state"],
                "counts": {
                    "episodes": run["stored"],
                    "planned": run["planned"],
                    "unit": "episodes",
                    "statuses": run["statuses"],
                    "stages_passed": run["stages_passed"],
                    "stages_total": run["stages_total"],
                    "total_tokens": run["total_tokens"],
                },
                "created_at": run["created_at"],
                "updated_at": run["updated_at"],
                "href": f"#/runs/{quote(run['name'], safe='')}",
            }
        )
    return items


#: Every kind the list shows, in tab order.
KINDS: tuple[ItemKind, ...] = (
    ItemKind("run", "Runs", run_items),
    ItemKind("bench", "Benchmarks", bench_items),
    ItemKind("gen", "Generations", generation_items),
)


def list_items(reader: StoreReader, kind: str | None = None) -> JSONDict:
    """The home list: rows of every kind (or of ``kind``), newest first, and the kinds."""
    rows: list[JSONDict] = []
    for item_kind in KINDS:
        if kind is None or item_kind.kind == kind:
            rows.extend(item_kind.list_items(reader))
    rows.sort(key=lambda r: r["updated_at"] or 0, reverse=True)
    kinds = [{"kind": k.kind, "label": k.label} for k in KINDS]
    return {"kinds": kinds, "items": rows}
