"""The run store: one SQLite file (``FOLDER/magma.db``, WAL) per output folder.

The bottom of the driver floor (DESIGN.md, layer 7): runs, and later the benchmark,
generation, export and the viewer, read and write episodes through it.

- :class:`RunStore`: runs, episodes and their normalised rows; each finished episode is one
  transaction.
- :class:`GenerationStore`: generation trees (situations with their snapshots, candidates),
  each executed candidate one transaction with the situation it led to.
- :func:`open_store`: the store of a folder, with a one-line :class:`UserError` when it cannot
  be opened.
- :class:`StoreReader`: every read the viewer and the exports make, over read-only
  connections; :mod:`~magma_core.store.scores` holds the generation scores they all share.
- :func:`episode_summary` / :func:`episode_rows`: an engine ``EpisodeRecord`` as the store's
  summary row and normalised rows.
"""

from __future__ import annotations

import os
from pathlib import Path

from magma_core.store.generation_store import GenerationStore
from magma_core.store.reader import StoreReader
from magma_core.store.rows import episode_rows, episode_summary
from magma_core.store.run_store import SCHEMA_VERSION, EpisodeRows, EpisodeSummary, RunStore
from magma_core.store.sqlite import STORE_VERSION, StoreError
from magma_core.user_error import UserError

STORE_FILE = "magma.db"
OUT_ENV = "MAGMA_OUT"  # the environment variable naming the default store folder


def default_out() -> Path:
    """The store folder commands use without ``--out``: ``$MAGMA_OUT`` when set, else
    ``runs`` (under the current directory)."""
    return Path(os.environ.get(OUT_ENV) or "runs")


def open_store(folder: str | Path, *, create: bool = True) -> RunStore:
    """The run store ``folder/magma.db``: writable when ``create`` (created when missing),
    else read-only (reading never writes). A missing (when not ``create``), foreign, newer,
    damaged or unwritable store is a one-line :class:`StoreError` (a ``UserError``)."""
    path = Path(folder) / STORE_FILE
    if not create and not path.exists():
        raise UserError(f"no run store at {path}")
    return RunStore(path, read_only=not create)


def open_generation_store(folder: str | Path, *, read_only: bool = False) -> GenerationStore:
    """The generation tables of ``folder/magma.db`` (created when missing unless
    ``read_only``); faults as for :func:`open_store`."""
    return GenerationStore(Path(folder) / STORE_FILE, read_only=read_only)


__all__ = [
    "OUT_ENV",
    "SCHEMA_VERSION",
    "STORE_VERSION",
    "StoreError",
    "STORE_FILE",
    "EpisodeRows",
    "EpisodeSummary",
    "GenerationStore",
    "RunStore",
    "default_out",
    "StoreReader",
    "episode_rows",
    "episode_summary",
    "open_generation_store",
    "open_store",
]
