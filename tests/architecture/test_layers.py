"""DESIGN.md's layer rule, checked on the source: a module's top-level imports stay within
what its layer may import (function-level imports are deliberate lazy edges, not checked)."""

from __future__ import annotations

import ast
from pathlib import Path

import magma_core

ROOT = Path(magma_core.__file__).parent

# package prefix -> layer; the longest matching prefix wins.
LAYERS = {
    "magma_core.simulation.data_structures": 1,
    "magma_core.user_error": 1,
    "magma_core.text_safety": 1,
    "magma_core.simulation.goals": 2,
    "magma_core.simulation.errors": 2,
    "magma_core.simulation.stage": 2,
    "magma_core.simulation.tools": 2,
    "magma_core.simulation.tasks": 2,
    "magma_core.serialization": 2,
    "magma_core.simulation.state": 3,
    "magma_core.simulation.envs": 4,
    "magma_core.simulation.motion": 4,
    "magma_core.simulation.executor": 5,
    "magma_core.protocol": 6,
    "magma_core.agents": 6,
    "magma_core.judge": 6,
    "magma_core.scenarios": 6,
    "magma_core.store": 7,
    "magma_core.runs": 7,
    "magma_core.cli": 8,
}
# layer -> the layers it may import (DESIGN.md's table)
MAY_IMPORT = {1: {1}, 2: {1, 2}, 3: {1, 3}, 4: {1, 3, 4}, 5: {1, 2, 3, 4, 5}, 6: {1, 2, 6},
              7: {1, 2, 3, 4, 5, 6, 7}, 8: {1, 2, 3, 4, 5, 6, 7, 8}}
SIMULATOR = ("mani_skill", "sapien", "gymnasium")


def layer_of(module: str) -> int | None:
    matches = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(matches, key=len)] if matches else None


def top_level_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, path))
    return out


def test_every_module_has_a_layer():
    packages = {"magma_core", "magma_core.simulation"}  # namespaces holding the layers
    missing = [name for name, _ in modules() if name not in packages and layer_of(name) is None]
    assert missing == []


def test_no_module_imports_a_layer_it_may_not():
    broken = []
    for name, path in modules():
        layer = layer_of(name)
        if layer is None:
            continue
        for imported in top_level_imports(path):
            if imported.startswith(SIMULATOR) and layer != 4:
                broken.append(f"{name} imports the simulator ({imported})")
            target = layer_of(imported)
            if target is not None and target not in MAY_IMPORT[layer]:
                broken.append(f"{name} (layer {layer}) imports {imported} (layer {target})")
    assert broken == []
