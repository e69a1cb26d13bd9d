"""What shapes an export (:class:`ExportSettings`, all of it in the manifest's signature) and
the two kinds of ``refused`` entry that are not refusals: a :class:`Notice` (a warning line) and
a :class:`Duplicate` (a chat row dropped because an earlier row holds its conversation)."""

from __future__ import annotations

from dataclasses import dataclass

from magma_core.store import scores as sc


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
