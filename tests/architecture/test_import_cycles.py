"""DESIGN.md's no-cycle rule: no import cycle among the modules of ``magma_core`` and
``magma_scenarios``, between packages or inside one package. Every import that can run counts
(at a module's top or inside a function; ``if TYPE_CHECKING:`` blocks do not), and
``from pkg import name`` counts as importing ``pkg.name`` when that is a module. A module's
import of its own ancestor package (its ``__init__``) is left out: Python runs the package
first anyway. A failure names each cycle, module by module."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from architecture.test_layers import ROOT, imports

SOURCE_ROOT = ROOT.parent
TOP_PACKAGES = ("magma_core", "magma_scenarios", "magma_verifiers")


def module_sources(root: Path = SOURCE_ROOT) -> dict[str, str]:
    """Module name -> source, for every module of the checked top-level packages."""
    out = {}
    for top in TOP_PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path.read_text()
    return out


def _resolve(name: str, known: Mapping[str, str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(sources: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the modules it imports (among ``sources``)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, source in sources.items():
        for imported, _ in imports(source):
            for target in (imported, *(f"{imported}.{n}" for n in _imported_names(source, imported))):
                found = _resolve(target, sources)
                if found and found != name and not name.startswith(found + "."):
                    graph[name].add(found)
    return graph


def _imported_names(source: str, module: str) -> list[str]:
    """The names ``from module import ...`` statements of ``source`` take (maybe submodules)."""
    import ast

    return [alias.name for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module == module for alias in node.names]


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each import cycle (a strongly connected component of two or more modules), as the
    path of modules that closes it, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(_closing_path(sorted(component), graph))
    return sorted(components)


def _closing_path(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """A path from the component's first module back to itself, inside the component."""
    members, first = set(component), component[0]
    paths = {first: [first]}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == first:
                    return [*paths[node], first]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    return component  # not reached: a component always closes


def describe(found: list[list[str]]) -> str:
    return "; ".join(" -> ".join(path) for path in found)


def test_no_module_takes_part_in_an_import_cycle():
    found = cycles(import_graph(module_sources()))
    assert not found, f"{len(found)} import cycle(s): {describe(found)}"


def test_a_planted_cycle_inside_a_package_is_caught_and_named(tmp_path):
    package = tmp_path / "magma_core" / "planted"
    package.mkdir(parents=True)
    (tmp_path / "magma_core" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text("from magma_core.planted.formats import BUILTIN\n")
    (package / "formats.py").write_text(
        "def builtin():\n    from magma_core.planted import writers\n    return writers\nBUILTIN = 1\n")
    (package / "writers.py").write_text("from magma_core.planted import registry\n")
    (package / "below.py").write_text("import magma_core.planted\n")  # its own package: no cycle
    found = cycles(import_graph(module_sources(tmp_path)))
    assert found == [["magma_core.planted.formats", "magma_core.planted.writers",
                      "magma_core.planted.registry", "magma_core.planted.formats"]]
    assert "magma_core.planted.formats -> magma_core.planted.writers" in describe(found)


def test_a_cycle_hidden_under_type_checking_is_not_one(tmp_path):
    package = tmp_path / "magma_core"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import magma_core.b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import magma_core.a\n")
    assert cycles(import_graph(module_sources(tmp_path))) == []
