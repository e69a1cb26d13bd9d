"""Exporter plug-ins: a renderer registered under the entry-point group ``magma.export``.

A package declares ``[project.entry-points."magma.export"] NAME = "pkg.module:factory"``, where
``factory`` is an :class:`Exporter` or a no-argument callable returning one, and
``magma export SOURCE --format NAME`` finds it. Only the requested entry point is imported
(discovery reads the installed metadata); two entry points of one name are refused. The
exporter says which producers it accepts (``agent_ids`` and a PEP 440 ``agent_versions``
specifier); a source produced by another agent is refused with both identities named, as the
predecessor's ``magma-gen export`` does. Our ``chat-jsonl``, ``preference-jsonl`` and ``hf``
are built-in plug-ins registered the same way (and known without the metadata too, so an
uninstalled checkout still exports).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from magma_core import __version__
from magma_core.export.rows import ExportForest

ENTRY_POINT_GROUP = "magma.export"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")

#: ``(forest, settings, refused) -> [(group, row)]``: the rows of an export, each tagged with its
#: split group (a tree); a row left out for a reason goes to ``refused`` as ``"id: reason"``.
RowsFn = Callable[[ExportForest, Any, list[str]], list[tuple[str, dict[str, Any]]]]
#: ``(output folder, {split: rows}) -> written files``; None writes ``STEM_SPLIT.jsonl`` files.
WriteFn = Callable[[Path, dict[str, list[dict[str, Any]]]], list[Path]]


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
    explain_empty: Callable[[ExportForest, Any], str] | None = None

    def check_producer(self, agent_id: str | None, agent_version: str | None) -> str | None:
        """Why a source produced by ``agent_id`` at ``agent_version`` cannot be exported with
        this exporter (None when it can)."""
        if self.agent_ids and agent_id not in self.agent_ids:
            return (f"exporter {self.name} accepts data produced by {', '.join(self.agent_ids)}, "
                    f"not by {agent_id or 'an unknown agent'}")
        if self.agent_versions:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet
            from packaging.version import InvalidVersion, Version

            try:
                ok = agent_version is not None and Version(agent_version) in SpecifierSet(self.agent_versions)
            except (InvalidSpecifier, InvalidVersion):
                ok = False
            if not ok:
                return (f"exporter {self.name} accepts {agent_id or 'agent'} versions {self.agent_versions}, "
                        f"the source was produced by version {agent_version or 'unknown'}")
        return None


def _builtin() -> dict[str, Exporter]:
    from magma_core.export import builtin_formats as b

    return {e.name: e for e in (b.chat_jsonl(), b.preference_jsonl(), b.hf())}


def _entry_points() -> dict[str, list[metadata.EntryPoint]]:
    found: dict[str, list[metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, [])
        if all(ep.value != other.value for other in found[ep.name]):
            found[ep.name].append(ep)
    return found


def available_formats() -> list[str]:
    """Every exporter name: the built-in ones and those registered by installed packages."""
    return sorted(set(_builtin()) | set(_entry_points()))


def get_exporter(name: str) -> Exporter:
    """The exporter registered as ``name`` (see the module); :class:`ExporterError` otherwise."""
    points = _entry_points().get(name, [])
    if len(points) > 1:
        raise ExporterError(f"two exporters are registered as {name!r}: "
                            + ", ".join(p.value for p in points))
    if not points:
        builtin = _builtin()
        if name in builtin:
            return builtin[name]
        raise ExporterError(f"unknown export format {name!r}: use one of {', '.join(available_formats())}")
    try:
        loaded = points[0].load()
        exporter = loaded if isinstance(loaded, Exporter) else loaded()
    except Exception as exc:  # a broken plug-in: one line, nothing written
        raise ExporterError(f"exporter {name!r} ({points[0].value}) cannot be loaded: "
                            f"{type(exc).__name__}: {exc}") from None
    if not isinstance(exporter, Exporter):
        raise ExporterError(f"exporter {name!r} ({points[0].value}) returned {type(exporter).__name__}, "
                            "not a magma_core.export.Exporter")
    if exporter.name != name:
        raise ExporterError(f"exporter registered as {name!r} calls itself {exporter.name!r}")
    return exporter


#: agent specs (``magma run/gen --agent``) -> the agent id their built-in agent reports
_SPEC_IDS = (("noisy-trace", "magma.noisy_trace"), ("trace", "magma.trace"),
             ("openai:", "magma.openai_chat"))


def producer_of(source: dict[str, Any]) -> tuple[str | None, str | None]:
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
