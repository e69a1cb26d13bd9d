"""Named suites and default condition transforms come from scenario manifests, not the core."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import magma_core
from magma_core.bench.suite import compile_suite, read_spec
from magma_core.scenarios import ScenarioManifest
from magma_core.scenarios.registry import ScenarioError, default_transforms, find_suite


def test_the_builtin_suites_are_the_sorting_scenarios():
    smoke = find_suite("smoke")
    assert smoke is not None and smoke.exists()
    assert "magma_scenarios" in smoke.parts and not smoke.is_relative_to(Path(magma_core.__file__).parent)
    assert find_suite("sorting").name == "sorting.yaml"
    assert find_suite("no-such-suite") is None
    assert read_spec("smoke")["name"] == "smoke"


def test_default_transforms_are_the_manifests():
    assert default_transforms(["sorting.SortAll", "sorting.LongSorting"]) == \
        "magma_scenarios.sorting.bench_conditions"
    with pytest.raises(ScenarioError, match="transforms"):
        default_transforms(["cube.PickPlace"])  # cube declares none


def test_a_manifest_checks_its_suites_and_transforms():
    ScenarioManifest(id="x", suites={"s": "pkg.mod:suites/s.yaml"}, transforms="pkg.cond")
    with pytest.raises(ValueError, match="suites"):
        ScenarioManifest(id="x", suites={"s": "not a resource"})
    with pytest.raises(ValueError, match="transforms"):
        ScenarioManifest(id="x", transforms="not a module!")


def test_a_spec_without_transforms_compiles_with_the_scenarios(tmp_path):
    spec = find_suite("smoke").read_text()
    bare = tmp_path / "bare.yaml"
    bare.write_text("\n".join(line for line in spec.splitlines() if not line.startswith("transforms:")))
    a = compile_suite("smoke", tmp_path / "a").parent
    b = compile_suite(bare, tmp_path / "b").parent
    items = sorted(p.name for p in (a / "items").iterdir())
    assert items and items == sorted(p.name for p in (b / "items").iterdir())
    for name in items:
        assert json.loads((a / "items" / name).read_text()) == json.loads((b / "items" / name).read_text())
