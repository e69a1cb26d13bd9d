"""What an exporter is: the :class:`Exporter` record, its :class:`ExporterError`, and who
produced a source (:func:`producer_of`, which an exporter's producer check is asked about).

The protocol every exporter plug-in is written against, below all its users: the registry
(:mod:`.plugins`) that finds one by name, the built-in formats (:mod:`.builtin_formats`) that
define three, and the writer (:mod:`.writers`) that runs one. Keeping it here, not in the
registry, is what lets the built-in formats use the row builders with no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from magma_core import __version__
from magma_core.export.rows import ExportForest
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.settings import ExportSettings

#: ``(forest, settings, refused) -> [(group, row)]``: the rows of an export, each tagged with its
#: split group (a tree); a row left out for a reason goes to ``refused`` as ``"id: reason"``.
RowsFn = Callable[[ExportForest, Any, list[str]], list[tuple[str, JSONDict]]]
#: ``(output folder, {split: rows}) -> written files``; None writes ``STEM_SPLIT.jsonl`` files.
WriteFn = Callable[[Path, dict[str, list[JSONDict]]], list[Path]]


class ExporterError(ValueError):
    """An unknown, broken or incompatible exporter (one-line message)."""


@dataclass(frozen=True)
class Exporter:
    """A dataset renderer: ``rows`` turns a forest into rows, ``write`` (optional) writes them.

    ``agent_ids``: the producer agent ids it accepts (empty: any); ``agent_versions``: a PEP 440
    specifier their version must meet (None: any)."""

    name: str
    rows: RowsFn
    stem: str = ""
    write: WriteFn | None = None
    agent_ids: tuple[str, ...] = ()
    agent_versions: str | None = None
    description: str = ""
    #: ``(forest, settings) -> why there are no rows`` (shown when an export writes none)
    explain_empty: Callable[[ExportForest, ExportSettings], str] | None = None
    #: its rows are chat rows with a ``kind``: the manifest counts them per kind (zeros too)
    kinds: bool = False

    def check_producer(self, agent_id: str | None, agent_version: str | None) -> str | None:
        """Why a source produced by ``agent_id`` at ``agent_version`` cannot be exported with
        this exporter (None when it can)."""
        if self.agent_ids and agent_id not in self.agent_ids:
            return (f"exporter {self.name} accepts data produced by {', '.join(self.agent_ids)}, "
                    f"not by {agent_id or 'an unknown agent'}")
        if self.agent_versions:
            try:
                ok = agent_version is not None and Version(agent_version) in SpecifierSet(self.agent_versions)
            except (InvalidSpecifier, InvalidVersion):
                ok = False
            if not ok:
                return (f"exporter {self.name} accepts {agent_id or 'agent'} versions {self.agent_versions}, "
                        f"the source was produced by version {agent_version or 'unknown'}")
        return None


#: agent specs (``magma run/gen --agent``) -> the agent id their built-in agent reports
_SPEC_IDS = (("noisy-trace", "magma.noisy_trace"), ("trace", "magma.trace"),
             ("openai:", "magma.openai_chat"))


def producer_of(source: JSONDict) -> tuple[str | None, str | None]:
    """``(agent_id, agent_version)`` of the agent that produced a source: the ``producer`` its
    config records, else the built-in agent its ``agent`` spec names (at this version of MAGMA);
    ``(None, None)`` for a remote agent that recorded nothing."""
    config = source.get("config") or {}
    producer = config.get("producer") if isinstance(config.get("producer"), dict) else None
    if producer and producer.get("agent_id"):
        return str(producer["agent_id"]), str(producer.get("agent_version") or "") or None
    spec = str(config.get("agent") or "")
    for prefix, agent_id in _SPEC_IDS:
        if spec == prefix or spec.startswith(prefix if prefix.endswith(":") else prefix + ":"):
            return agent_id, __version__
    return None, None
