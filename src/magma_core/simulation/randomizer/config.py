"""The randomization YAML: its schema, loading and checking.

```yaml
tools:                                  # required
  <canonical tool>:
    name: [<public name>, ...]          # identifiers
    description: [<text>, ...]          # optional
    parameters:                         # optional
      <canonical parameter>: {name: [...], description: [...]}
attributes:                             # optional: whole lists of public values
  <attribute>: [[v1, v2, ...], ...]     # each at least as long as the task's list
semantic_attributes:                    # optional: families of related names
  <family>:
    canonical: [red, green, ...]        # roots (default: the task attribute <family>)
    variations: [[crimson, jade, ...], ...]   # same length as the roots
    forms: ["{value}_cube", "{value}"]  # one {value} each; both sides expand
```

Paths in tasks and definitions (``randomized_config_path``) are relative to the package of
the class that declares them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from magma_core.json_types import JSONDict
from magma_core.simulation.randomizer.spec import IDENTIFIER


def resolve_config_path(owner: object, path: str) -> Path:
    """``path`` relative to the directory of the module that defines ``owner`` (a class, or
    an instance: a generated task resolves against its definition's module)."""
    if not isinstance(path, str) or not path:
        raise TypeError("this task has no randomized_config_path")
    candidate = Path(path)
    if candidate.is_absolute():
        return candidate
    cls = getattr(owner, "definition", None) or (owner if isinstance(owner, type) else type(owner))
    module = sys.modules.get(cls.__module__)
    if module is None or getattr(module, "__file__", None) is None:
        raise ValueError(f"cannot locate the package of {cls.__qualname__} to resolve {path!r}")
    return Path(module.__file__).parent / candidate


def load_config(path: Path) -> JSONDict:
    """Read and check a randomization YAML (``ValueError`` naming the broken rule)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"cannot read randomization config {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"randomization config {path} is not valid YAML: {exc}") from None
    return check_config(data, str(path))


def _strings(value: object, where: str, *, identifiers: bool = False) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where} must be a non-empty list of strings")
    if identifiers and not all(IDENTIFIER.match(v) for v in value):
        raise ValueError(f"{where} must hold identifiers ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def check_config(data: object, where: str = "randomization config") -> JSONDict:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: the top level must be a mapping")
    unknown = set(data) - {"tools", "attributes", "semantic_attributes"}
    if unknown:
        raise ValueError(f"{where}: unknown sections {sorted(unknown)}")
    tools = data.get("tools")
    if not isinstance(tools, dict) or not tools:
        raise ValueError(f"{where}: No tool randomization detected.")
    for tool, entry in tools.items():
        if not isinstance(entry, dict) or "name" not in entry:
            raise ValueError(f"{where}: tools.{tool} needs a 'name' list")
        _strings(entry["name"], f"{where}: tools.{tool}.name", identifiers=True)
        if "description" in entry:
            _strings(entry["description"], f"{where}: tools.{tool}.description")
        for param, spec in (entry.get("parameters") or {}).items():
            if not isinstance(spec, dict) or "name" not in spec:
                raise ValueError(f"{where}: tools.{tool}.parameters.{param} needs a 'name' list")
            _strings(spec["name"], f"{where}: tools.{tool}.parameters.{param}.name", identifiers=True)
            if "description" in spec:
                _strings(spec["description"], f"{where}: tools.{tool}.parameters.{param}.description")
    for attribute, variations in (data.get("attributes") or {}).items():
        if not isinstance(variations, list) or not variations:
            raise ValueError(f"{where}: attributes.{attribute} must be a list of lists")
        for i, variation in enumerate(variations):
            _strings(variation, f"{where}: attributes.{attribute}[{i}]")
    for family, entry in (data.get("semantic_attributes") or {}).items():
        if not isinstance(entry, dict) or not {"variations", "forms"} <= set(entry):
            raise ValueError(f"{where}: semantic_attributes.{family} needs variations and forms")
        if "canonical" in entry:
            _strings(entry["canonical"], f"{where}: semantic_attributes.{family}.canonical",
                     identifiers=True)
        forms = _strings(entry["forms"], f"{where}: semantic_attributes.{family}.forms")
        if len(set(forms)) != len(forms) or any(f.count("{value}") != 1 for f in forms):
            raise ValueError(f"{where}: semantic_attributes.{family}.forms must be unique, each "
                             "with exactly one {value}")
        for i, variation in enumerate(entry["variations"] or [None]):
            _strings(variation, f"{where}: semantic_attributes.{family}.variations[{i}]",
                     identifiers=True)
    return data
