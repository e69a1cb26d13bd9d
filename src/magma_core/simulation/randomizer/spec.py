"""``RandomizationSpec``: one public names for a task (tools, parameters, attribute values).

"Public" names are what the agent sees; "canonical" names are what the engine and the
scenario run. The spec is plain data (``to_dict``/``from_dict`` JSON-compatible), stored in
each episode record and in frozen task specs.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from magma_core.json_types import JSONDict

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BAD_VALUE = re.compile(r'["\\\x00-\x1f\x7f]')


@dataclass
class RandomizationSpec:
    """A vocabulary mapping.

    Attributes:
        tool_equivalence: ``{public_tool: {"name": real_tool, "parameters": {public: real}}}``.
        attributes_equivalence: canonical attribute value -> public value.
        reversed_attributes_equivalence: public -> canonical (derived when left empty).
        tools: the public tool schema (the engine's description format, ``required`` kept).
        attribute_keys_order: the order of attribute keys shown to the agent.
        attribute_values_order: ``{attribute: [public values in display order]}``.
    """

    tool_equivalence: dict[str, JSONDict] = field(default_factory=dict)
    attributes_equivalence: dict[str, str] = field(default_factory=dict)
    reversed_attributes_equivalence: dict[str, str] = field(default_factory=dict)
    tools: list[JSONDict] = field(default_factory=list)
    attribute_keys_order: list[str] = field(default_factory=list)
    attribute_values_order: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.reversed_attributes_equivalence:
            self.reversed_attributes_equivalence = {
                p: c for c, p in self.attributes_equivalence.items()
            }
        self.validate()

    def validate(self) -> None:
        """``ValueError``/``TypeError`` unless the mapping is one-to-one and well formed."""
        check_value_pairs(self.attributes_equivalence)
        if {p: c for c, p in self.attributes_equivalence.items()} != self.reversed_attributes_equivalence:
            raise ValueError("reversed_attributes_equivalence is not the inverse of attributes_equivalence")
        reals = set()
        for public, entry in self.tool_equivalence.items():
            if not IDENTIFIER.match(public):
                raise ValueError(f"public tool name {public!r} is not an identifier")
            if not isinstance(entry, dict) or set(entry) != {"name", "parameters"}:
                raise TypeError(f"tool_equivalence[{public!r}] needs exactly 'name' and 'parameters'")
            if entry["name"] in reals:
                raise ValueError(f"tool {entry['name']!r} has two public names")
            reals.add(entry["name"])
            params = entry["parameters"]
            if len(set(params.values())) != len(params):
                raise ValueError(f"tool {public!r}: two public parameters name the same argument")
            for name in params:
                if not IDENTIFIER.match(name):
                    raise ValueError(f"tool {public!r}: public parameter {name!r} is not an identifier")

    def is_identity(self) -> bool:
        """True when no name changes (the agent sees the canonical vocabulary)."""
        same_tools = all(
            public == e["name"] and all(p == r for p, r in e["parameters"].items())
            for public, e in self.tool_equivalence.items()
        )
        return same_tools and all(c == p for c, p in self.attributes_equivalence.items())

    def to_dict(self) -> JSONDict:
        return copy.deepcopy(
            {
                "tool_equivalence": self.tool_equivalence,
                "attributes_equivalence": self.attributes_equivalence,
                "reversed_attributes_equivalence": self.reversed_attributes_equivalence,
                "tools": self.tools,
                "attribute_keys_order": self.attribute_keys_order,
                "attribute_values_order": self.attribute_values_order,
            }
        )

    @classmethod
    def from_dict(cls, data: JSONDict) -> RandomizationSpec:
        if not isinstance(data, dict):
            raise TypeError(f"a randomization spec is a dict, got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown randomization spec keys {sorted(unknown)}")
        return cls(**copy.deepcopy(data))


def check_value_pairs(pairs: dict[str, str]) -> None:
    """Canonical -> public values: strings, public values clean and unique, and no public
    value equal to a *different* canonical value."""
    seen: dict[str, str] = {}
    for canonical, public in pairs.items():
        if not isinstance(canonical, str) or not isinstance(public, str):
            raise TypeError(f"attribute values are strings, got {canonical!r} -> {public!r}")
        if not public.strip() or _BAD_VALUE.search(public):
            raise ValueError(f"public value {public!r} (for {canonical!r}) is empty or has quotes, "
                             "backslashes or control characters")
        if public in seen:
            raise ValueError(f"public value {public!r} names both {seen[public]!r} and {canonical!r}")
        seen[public] = canonical
        if public != canonical and public in pairs:
            raise ValueError(f"public value {public!r} (for {canonical!r}) is another canonical value")
