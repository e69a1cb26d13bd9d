"""The types of the data MAGMA reads and writes as JSON: records, rows, specs, wire payloads.

``JSONValue`` is what ``json.loads`` can return; ``JSONDict`` is a JSON object (a record, a
row, a spec). A value that is only stored or passed on, whatever it is, is typed ``object``
instead; a batched env state (tensors) is ``simulation.state.StateTree``.
"""

from __future__ import annotations

from typing import TypeAlias

from typing_extensions import TypeAliasType

__all__ = ["JSONDict", "JSONScalar", "JSONValue"]

JSONScalar: TypeAlias = None | bool | int | float | str
# A TypeAliasType (PEP 695's alias, from typing_extensions on 3.11) so that pydantic, and so
# FastAPI's request and response models, resolve the recursion as the type checker does.
JSONValue = TypeAliasType(
    "JSONValue", "None | bool | int | float | str | list[JSONValue] | dict[str, JSONValue]"
)
JSONDict: TypeAlias = dict[str, JSONValue]
