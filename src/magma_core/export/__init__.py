"""Layer 7: training data from the store (runs and generations alike).

``load_forest(store_path, name)`` reads a generation or a run as situations and candidate
decisions; ``write_export(forest, ExportSettings(format=...), folder)`` writes ``chat-jsonl``,
``preference-jsonl``, ``hf`` or an exporter plug-in (:mod:`.plugins`) with a train/validation split by tree and a manifest of hashes.
Candidates are selected with the predecessor's scores (:mod:`magma_core.store.scores`).
Chat rows keep a path's mistakes masked (``"weight": 0``) and say their ``kind`` (``KINDS``:
clean, coached, recovery, perturbed; :mod:`.kinds`), which the manifest counts.
:mod:`.run_jsonl` writes a run's episodes or decision steps as JSON Lines (``magma runs export``).
"""

from magma_core.export.exporter import Exporter, ExporterError
from magma_core.export.kinds import KINDS
from magma_core.export.plugins import available_formats, get_exporter
from magma_core.export.rows import Candidate, ExportForest, Situation
from magma_core.export.sources import SourceError, load_forest
from magma_core.export.writers import FORMATS, ExportReport, ExportSettings, write_export

__all__ = [
    "FORMATS",
    "KINDS",
    "Candidate",
    "ExportForest",
    "Exporter",
    "ExporterError",
    "ExportReport",
    "ExportSettings",
    "Situation",
    "SourceError",
    "available_formats",
    "get_exporter",
    "load_forest",
    "write_export",
]
