"""The ``--out`` option's default: ``$MAGMA_OUT`` when set, else ``runs`` (see
:func:`magma_core.store.default_out`)."""

from __future__ import annotations

from magma_core.store import OUT_ENV, default_out

OUT_HELP = f"store folder (${OUT_ENV}, else runs)"

__all__ = ["OUT_HELP", "default_out"]
