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
from importlib import metadata

from magma_core.export import builtin_formats
from magma_core.export.exporter import Exporter, ExporterError, RowsFn, WriteFn, producer_of

__all__ = ["ENTRY_POINT_GROUP", "Exporter", "ExporterError", "RowsFn", "WriteFn", "available_formats",
           "get_exporter", "producer_of"]

ENTRY_POINT_GROUP = "magma.export"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


def _builtin() -> dict[str, Exporter]:
    formats = (builtin_formats.chat_jsonl(), builtin_formats.preference_jsonl(), builtin_formats.hf())
    return {e.name: e for e in formats}


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
