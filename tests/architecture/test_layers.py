"""DESIGN.md's layer rule, checked on the source, whole: every import a module makes (at its
top or inside a function) stays within what its layer may import, and inside the driver floor
(layer 7) within what its package may use (``FLOOR_7``); a deferred (function-level) import is
allowed only where DEFERRED lists it with its reason; no two packages import each other; SQL
(``sqlite3``, ``.execute(...)``) only in ``magma_core.store``. The built-in scenarios
(``magma_scenarios``) import the contract (layers 1-2), layer 4 and the manifest class only.
Imports under ``if TYPE_CHECKING:`` never run and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import magma_core

ROOT = Path(magma_core.__file__).parent
SCENARIOS_ROOT = ROOT.parent / "magma_scenarios"

# package prefix -> layer; the longest matching prefix wins.
LAYERS = {
    "magma_core.simulation.data_structures": 1,
    "magma_core.serialization": 1,
    "magma_core.json_types": 1,
    "magma_core.user_error": 1,
    "magma_core.text_safety": 1,
    "magma_core.simulation.goals": 2,
    "magma_core.simulation.errors": 2,
    "magma_core.simulation.stage": 2,
    "magma_core.simulation.tools": 2,
    "magma_core.simulation.tasks": 2,
    "magma_core.simulation.skills": 2,
    "magma_core.simulation.requests": 2,
    "magma_core.simulation.constraints": 2,
    "magma_core.simulation.randomizer": 2,
    "magma_core.simulation.state": 3,
    "magma_core.simulation.envs": 4,
    "magma_core.simulation.motion": 4,
    "magma_core.simulation.executor": 5,
    "magma_core.protocol": 6,
    "magma_core.agents": 6,
    "magma_core.judge": 6,
    "magma_core.scenarios": 6,
    "magma_core.render": 6,
    "magma_core.store": 7,
    "magma_core.gen": 7,
    "magma_core.bench": 7,
    "magma_core.export": 7,
    "magma_core.runs": 7,
    "magma_core.rl": 7,
    "magma_core.cli": 8,
    "magma_core.view": 8,
    "magma_core.integrations": 8,
}
# layer -> the layers it may import (DESIGN.md's table)
MAY_IMPORT = {1: {1}, 2: {1, 2}, 3: {1, 3}, 4: {1, 3, 4}, 5: {1, 2, 3, 4, 5}, 6: {1, 2, 6},
              7: {1, 2, 3, 4, 5, 6, 7}, 8: {1, 2, 3, 4, 5, 6, 7, 8}}
# A package whose floor is narrower than its layer's (DESIGN.md's table): package -> the
# layers it may import besides itself. ``render`` sits on layer 6 but reaches the simulator
# layers (3, 4) the other layer-6 packages may not, and none of its neighbours.
PACKAGE_MAY_IMPORT = {"magma_core.render": {1, 2, 3, 4}}
# Inside the driver floor (DESIGN.md, layer 7): package -> the layer-7 packages it may use.
FLOOR_7 = {
    "magma_core.store": set(),
    "magma_core.runs": {"magma_core.store"},
    "magma_core.bench": {"magma_core.runs", "magma_core.store"},
    "magma_core.gen": {"magma_core.runs", "magma_core.store"},
    "magma_core.rl": {"magma_core.runs", "magma_core.store"},
    "magma_core.export": {"magma_core.store"},
}
#: The only package that speaks SQL (the store owns the schema).
SQL_PACKAGE = "magma_core.store"
SQL_CALLS = {"execute", "executemany", "executescript"}
# What scenario content may import of magma_core: the authoring contract (layers 1-2), the
# simulator layer (4: ``DefaultEnv``), and the manifest class its manifests are written with.
SCENARIO_LAYERS = {1, 2, 4}
SCENARIO_ALLOWED = ("magma_core.scenarios.manifest",)
SIMULATOR = ("mani_skill", "sapien", "gymnasium")
SIMULATOR_LAYERS = {4}

# The deferred imports, by (importing package prefix, imported prefix), each with its reason.
# Only what defers a real cost belongs here; anything else is imported at the module's top.
DEFERRED = {
    ("magma_core.cli", "magma_core."):
        "`magma --help` and each subcommand load only what that subcommand needs",
    ("magma_core.cli", "fastapi"): "only `magma serve-agent` pays for the web server",
    ("magma_core.cli", "uvicorn"): "only `magma serve-agent` pays for the web server",
    ("magma_core.cli", "readline"): "only an interactive `magma test-tools` loads readline",
    ("magma_core.runs.ray_cluster", "ray"):
        "Ray is an optional extra (magma[ray]), imported only when a command asks for --ray",
    ("magma_core.protocol.agent", "magma_core.simulation.data_structures"):
        "agent servers speak the protocol without importing torch (engine decisions need it)",
    ("magma_core.scenarios.registry", "magma_core.simulation.tasks"):
        "listing scenarios reads manifests only; loading a preset needs the task classes",
    ("magma_core.scenarios.registry", "magma_core.simulation.skills"):
        "listing scenarios reads manifests only; loading skills needs the skill base class",
    ("magma_core.simulation.executor.executor", "magma_core.simulation.envs"):
        "the simulator is imported only when an executor builds its own SimBatch",
    ("magma_core.simulation.executor.motion", "magma_core.simulation.motion"):
        "the simulator is imported only when the engine drives a real SimBatch",
    ("magma_core.render.rendered", "magma_core.simulation.envs"):
        "the simulator is imported only when a picture is rendered through a camera; "
        "schematic videos (and the viewer) never import it",
    ("magma_core.render.device", "magma_core.simulation.envs"):
        "the device is probed by the simulator layer only when MAGMA_RENDER does not force "
        "rendering off: a forced-off answer, and import magma_core.render, need no simulator",
    ("magma_core.simulation.executor.snapshots", "magma_core.simulation.envs"):
        "the simulator is imported only when a stored snapshot of a real SimBatch is loaded",
}
CHECKED_THIRD_PARTY = ("fastapi", "uvicorn", "readline", "ray", *SIMULATOR)


def layer_of(module: str) -> int | None:
    package = package_of(module)
    return None if package is None else LAYERS[package]


def package_of(module: str) -> str | None:
    matches = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return max(matches, key=len) if matches else None


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imports(source: str) -> list[tuple[str, bool]]:
    """(imported module, deferred) for every import statement that can run."""
    tree = ast.parse(source)
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                for sub in child.orelse:  # the else branch does run
                    visit(sub, deferred)
                continue
            inner = deferred or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if isinstance(child, ast.Import):
                found.extend((alias.name, inner) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                assert child.level == 0, "relative imports are not used in magma_core"
                found.append((child.module or "", inner))
            visit(child, inner)

    visit(tree, False)
    return found


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, path))
    return out


def _within(module: str, prefix: str) -> bool:
    prefix = prefix.rstrip(".")
    return module == prefix or module.startswith(prefix + ".")


def deferral_reason(module: str, imported: str) -> str | None:
    """The listed reason for ``module`` deferring its import of ``imported``, if any."""
    for (importer, target), reason in DEFERRED.items():
        if _within(module, importer) and _within(imported, target):
            return reason
    return None


def layer_violations(name: str, source: str) -> list[str]:
    """What is wrong with the imports of module ``name`` (whose source is ``source``)."""
    layer = layer_of(name)
    if layer is None:
        return []
    broken = []
    for imported, deferred in imports(source):
        if imported.startswith(SIMULATOR) and layer not in SIMULATOR_LAYERS:
            broken.append(f"{name} imports the simulator ({imported})")
        target = layer_of(imported)
        here, there = package_of(name), package_of(imported)
        allowed = PACKAGE_MAY_IMPORT.get(here or "", MAY_IMPORT[layer])
        if target is not None and there != here and target not in allowed:
            broken.append(f"{name} (layer {layer}) imports {imported} (layer {target})")
        if layer == 7 and target == 7 and there != here and there not in FLOOR_7.get(here, set()):
            broken.append(f"{name} ({here}) may not use {there} inside the driver floor")
        if imported.split(".")[0] == "sqlite3" and not _within(name, SQL_PACKAGE):
            broken.append(f"{name} imports sqlite3: SQL belongs in {SQL_PACKAGE}")
        crosses = target is not None and package_of(imported) != package_of(name)
        if deferred and (crosses or imported.split(".")[0] in CHECKED_THIRD_PARTY):
            if deferral_reason(name, imported) is None:
                broken.append(f"{name} defers importing {imported} without a listed reason")
    if not _within(name, SQL_PACKAGE):
        broken += [f"{name} runs SQL (.{call}(...)): SQL belongs in {SQL_PACKAGE}"
                   for call in sql_calls(source)]
    return broken


def sql_calls(source: str) -> list[str]:
    """The ``x.execute(...)``-style calls (sqlite3's statement methods) in ``source``."""
    return [node.func.attr for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_CALLS]


def scenario_violations(name: str, source: str) -> list[str]:
    """What is wrong with the imports of scenario module ``name``: anything of magma_core
    beyond the contract, layer 4 and the manifest class (drivers, front ends, the engine)."""
    broken = []
    for imported, _ in imports(source):
        if imported.split(".")[0] != "magma_core" or imported == "magma_core":
            continue
        if name == "magma_scenarios" and imported == "magma_core.scenarios":
            continue  # the provider helpers at the predecessor's path (list_scenarios, ...)
        if any(_within(imported, allowed) for allowed in SCENARIO_ALLOWED):
            continue
        target = layer_of(imported)
        if target not in SCENARIO_LAYERS:
            broken.append(f"{name} (scenario content) imports {imported} (layer {target})")
    return broken


def scenario_modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(SCENARIOS_ROOT.rglob("*.py")):
        parts = path.relative_to(SCENARIOS_ROOT.parent).with_suffix("").parts
        out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return out


def test_every_module_has_a_layer():
    packages = {"magma_core", "magma_core.simulation"}  # namespaces holding the layers
    missing = [name for name, _ in modules() if name not in packages and layer_of(name) is None]
    assert missing == []


def test_no_module_imports_a_layer_it_may_not_even_inside_a_function():
    broken = []
    for name, path in modules():
        broken += layer_violations(name, path.read_text())
    assert broken == []


def test_scenario_content_imports_only_the_contract_and_layer_4():
    assert scenario_modules(), "magma_scenarios not found"
    broken = []
    for name, path in scenario_modules():
        broken += scenario_violations(name, path.read_text())
    assert broken == []


def test_no_two_packages_import_each_other():
    edges: set[tuple[str, str]] = set()
    for name, path in modules():
        here = package_of(name)
        for imported, _ in imports(path.read_text()):
            there = package_of(imported)
            if here and there and here != there:
                edges.add((here, there))
    mutual = sorted((a, b) for a, b in edges if (b, a) in edges and a < b)
    assert mutual == []


def test_ray_an_optional_extra_is_imported_in_one_module_only():
    importers = {name for name, path in modules()
                 for imported, _ in imports(path.read_text()) if imported.split(".")[0] == "ray"}
    assert importers == {"magma_core.runs.ray_cluster"}


def test_the_trainer_libraries_are_imported_only_in_their_adapters():
    """TRL, verifiers, transformers and peft are the optional extra magma[rl]."""
    extras = {"trl", "verifiers", "transformers", "peft", "datasets"}
    importers = {(name, imported.split(".")[0]) for name, path in modules()
                 for imported, _ in imports(path.read_text()) if imported.split(".")[0] in extras}
    allowed = {"magma_core.rl.trl_adapter", "magma_core.rl.verifiers_adapter"}
    assert {name for name, lib in importers if lib != "datasets"} <= allowed


def test_rl_uses_only_runs_and_store_on_its_floor():
    """DESIGN.md: bench, gen and rl use runs and store (not each other)."""
    floor = {"magma_core.bench", "magma_core.gen", "magma_core.export"}
    broken = [f"{name} imports {imported}" for name, path in modules() if name.startswith("magma_core.rl")
              for imported, _ in imports(path.read_text())
              if any(_within(imported, p) for p in floor)]
    assert broken == []


def test_every_listed_deferral_is_still_used():
    used = set()
    for name, path in modules():
        for imported, deferred in imports(path.read_text()):
            if deferred:
                used |= {key for key in DEFERRED
                         if _within(name, key[0]) and _within(imported, key[1])}
    assert set(DEFERRED) - used == set()


# -- the checker itself catches what it must --------------------------------------------------
@pytest.mark.parametrize(
    "name, source, expected",
    [
        ("magma_core.simulation.executor.batch",
         "def f():\n    from magma_core.runs import run\n", "(layer 5) imports magma_core.runs"),
        ("magma_core.simulation.state.ops",
         "def f():\n    import mani_skill\n", "imports the simulator"),
        ("magma_core.agents.spec",
         "def f():\n    from magma_core.store import open_store\n", "(layer 6) imports"),
        ("magma_core.runs.entry",
         "def f():\n    from magma_core.simulation.envs import SimBatch\n",
         "defers importing magma_core.simulation.envs without a listed reason"),
        ("magma_core.render.video", "from magma_core.store.reader import StoreReader\n",
         "(layer 6) imports magma_core.store.reader (layer 7)"),
        ("magma_core.render.video", "from magma_core.agents.image_parts import IMAGES_KEY\n",
         "(layer 6) imports magma_core.agents.image_parts (layer 6)"),
        ("magma_core.render.rendered", "from magma_core.simulation.executor import Executor\n",
         "(layer 6) imports magma_core.simulation.executor (layer 5)"),
        ("magma_core.render.frames", "import sapien\n", "imports the simulator"),
    ],
)
def test_an_upward_or_unlisted_import_inside_a_function_is_caught(name, source, expected):
    assert any(expected in line for line in layer_violations(name, source))


@pytest.mark.parametrize(
    "name, source, expected",
    [
        ("magma_core.export.sources", "from magma_core.gen import generate\n",
         "may not use magma_core.gen inside the driver floor"),
        ("magma_core.export.sources", "def f():\n    from magma_core.runs.loop import RunLoop\n",
         "may not use magma_core.runs"),
        ("magma_core.store.reader", "from magma_core.bench.metrics import collect\n",
         "may not use magma_core.bench"),
        ("magma_core.runs.entry", "from magma_core.gen import generate\n",
         "may not use magma_core.gen"),
        ("magma_core.view.reader", "import sqlite3\n", "imports sqlite3"),
        ("magma_core.view.generations",
         "def rows(conn):\n    return conn.execute('SELECT * FROM gen_candidates')\n",
         "runs SQL (.execute(...))"),
    ],
)
def test_a_floor_7_import_or_sql_outside_the_store_is_caught(name, source, expected):
    assert any(expected in line for line in layer_violations(name, source))


def test_the_floor_7_rules_allow_what_design_allows():
    ok = [("magma_core.bench.runner", "from magma_core.runs import RunSpec\n"),
          ("magma_core.gen.generator", "from magma_core.store import GenerationStore\n"),
          ("magma_core.export.sources", "from magma_core.store.reader import StoreReader\n"),
          ("magma_core.store.reader", "import sqlite3\nc.execute('SELECT 1')\n"),
          ("magma_core.gen.generator", "self._execute()\n"),
          ("magma_core.render.video", "from magma_core.render.frames import WIDTH\n"),
          ("magma_core.render.rendered",
           "def f():\n    from magma_core.simulation.envs.state_camera import StateCamera\n"),
          ("magma_core.runs.videos", "from magma_core.render.video import write_video\n")]
    assert [line for name, source in ok for line in layer_violations(name, source)] == []


def test_scenario_content_importing_a_driver_or_front_end_is_caught():
    assert scenario_violations("magma_scenarios.x", "from magma_core.runs import run\n")
    assert scenario_violations("magma_scenarios.x", "def f():\n    import magma_core.view\n")
    assert scenario_violations("magma_scenarios.x",
                               "from magma_core.simulation.executor import Executor\n")
    assert scenario_violations("magma_scenarios.x", "from magma_core.simulation.tasks import BaseTask\n"
                               "from magma_core.simulation.envs import DefaultEnv\n"
                               "from magma_core.scenarios.manifest import ScenarioManifest\n") == []


def test_the_checker_fails_on_a_violating_module_written_to_disk(tmp_path):
    """A module file that imports gen from export, and one that runs SQL in the viewer, read
    from disk as the suite reads the real tree: both are reported."""
    export_mod = tmp_path / "magma_core" / "export" / "leak.py"
    view_mod = tmp_path / "magma_core" / "view" / "sql.py"
    export_mod.parent.mkdir(parents=True)
    view_mod.parent.mkdir(parents=True)
    export_mod.write_text("from magma_core.gen.trees import TreeTasks\n")
    view_mod.write_text("import sqlite3\n\ndef rows(p):\n    return sqlite3.connect(p).execute('SELECT 1')\n")
    broken = []
    for path in sorted(tmp_path.rglob("*.py")):
        name = ".".join(path.relative_to(tmp_path).with_suffix("").parts)
        broken += layer_violations(name, path.read_text())
    assert any("magma_core.export.leak" in b and "magma_core.gen" in b for b in broken)
    assert any("magma_core.view.sql imports sqlite3" in b for b in broken)
    assert any("magma_core.view.sql runs SQL" in b for b in broken)


def test_type_checking_imports_are_not_counted():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from magma_core.runs import run\n"
    assert layer_violations("magma_core.simulation.executor.batch", source) == []
