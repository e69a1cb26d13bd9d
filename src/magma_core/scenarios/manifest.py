"""``ScenarioManifest``: what a scenario provider declares (strings only, no imports)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_MODULE = re.compile(r"^[A-Za-z_][\w.]*$")
_RESOURCE = re.compile(r"^[A-Za-z_][\w.]*:[\w.][\w./-]*\.ya?ml$")


def _frozen(name: str, kind: str, mapping: Mapping[str, str], pattern: re.Pattern) -> Mapping:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"ScenarioManifest {name}.{kind} must be a mapping")
    for key, value in mapping.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"ScenarioManifest {name}.{kind}: empty key")
        if kind != "environments" and "." in key:
            raise ValueError(f"ScenarioManifest {name}.{kind}: local name {key!r} must not contain dots")
        if not isinstance(value, str) or not pattern.match(value):
            expected = {"environments": "a module path",
                        "suites": "'package.path:file.yaml'"}.get(kind, "'module.path:ClassName'")
            raise ValueError(f"ScenarioManifest {name}.{kind}[{key!r}] must be {expected}, got {value!r}")
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class ScenarioManifest:
    """A scenario: presets, definitions and skills as ``"module.path:ClassName"`` strings, the
    gym env ids it registers (env id -> module that registers it on import), its benchmark
    suites (suite name -> ``"package.path:file.yaml"``, a spec YAML shipped in the package,
    for ``magma bench compile NAME``) and ``transforms``, the module of its benchmark
    condition transforms (the default of its suites' specs; empty: none)."""

    id: str
    presets: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, str] = field(default_factory=dict)
    skills: Mapping[str, str] = field(default_factory=dict)
    environments: Mapping[str, str] = field(default_factory=dict)
    suites: Mapping[str, str] = field(default_factory=dict)
    transforms: str = ""

    def __new__(cls, *args: object, **kwargs: object) -> ScenarioManifest:
        """Refuse an unknown key with a line naming the manifest and the key (the dataclass's
        own ``__init__`` would only say "unexpected keyword argument")."""
        known = [f.name for f in fields(cls)]
        for key in kwargs:
            if key not in known:
                sid = args[0] if args else kwargs.get("id", "?")
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise TypeError(f"ScenarioManifest {sid!r}: unknown key {key!r} ({hint}"
                                f"the keys are {', '.join(known)})")
        return super().__new__(cls)

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
        object.__setattr__(self, "suites", _frozen(self.id, "suites", self.suites, _RESOURCE))
        if not isinstance(self.transforms, str) or (self.transforms and not _MODULE.match(self.transforms)):
            raise ValueError(f"ScenarioManifest {self.id}.transforms must be a module path, "
                             f"got {self.transforms!r}")
