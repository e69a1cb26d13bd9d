"""The types of the data MAGMA reads and writes as JSON: records, rows, specs, wire payloads.

``JSONValue`` is what ``json.loads`` can return; ``JSONDict`` is a JSON object (a record, a
row, a spec). A value that is only stored or passed on, whatever it is, is typed ``object``
instead; a batched env state (tensors) is ``simulation.state.StateTree``.
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSONDict", "JSONScalar", "JSONValue"]

JSONScalar: TypeAlias = None | bool | int | float | str
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
JSONDict: TypeAlias = dict[str, JSONValue]
