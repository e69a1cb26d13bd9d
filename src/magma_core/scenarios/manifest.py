"""``ScenarioManifest``: what a scenario provider declares (strings only, no imports)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_MODULE = re.compile(r"^[A-Za-z_][\w.]*$")


def _frozen(name: str, kind: str, mapping: Mapping[str, str], pattern: re.Pattern) -> Mapping:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"ScenarioManifest {name}.{kind} must be a mapping")
    for key, value in mapping.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"ScenarioManifest {name}.{kind}: empty key")
        if kind != "environments" and "." in key:
            raise ValueError(f"ScenarioManifest {name}.{kind}: local name {key!r} must not contain dots")
        if not isinstance(value, str) or not pattern.match(value):
            expected = "a module path" if kind == "environments" else "'module.path:ClassName'"
            raise ValueError(f"ScenarioManifest {name}.{kind}[{key!r}] must be {expected}, got {value!r}")
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class ScenarioManifest:
    """A scenario: presets, definitions and skills as ``"module.path:ClassName"`` strings, and the
    gym env ids it registers (env id -> module that registers it on import)."""

    id: str
    presets: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, str] = field(default_factory=dict)
    skills: Mapping[str, str] = field(default_factory=dict)
    environments: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip() or self.id != self.id.strip():
            raise ValueError(f"ScenarioManifest id must be a non-empty trimmed string, got {self.id!r}")
        if "." in self.id:
            raise ValueError(f"ScenarioManifest id {self.id!r} must not contain dots")
        for kind in ("presets", "definitions", "skills"):
            object.__setattr__(self, kind, _frozen(self.id, kind, getattr(self, kind), _TARGET))
        object.__setattr__(
            self, "environments", _frozen(self.id, "environments", self.environments, _MODULE)
        )
