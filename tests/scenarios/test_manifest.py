"""Scenario manifests and discovery of the installed providers."""

import subprocess
import sys

import pytest

from magma_core.scenarios import ScenarioError, ScenarioManifest, get_scenario, list_scenarios
from magma_core.scenarios.registry import _split


def test_manifest_validation():
    m = ScenarioManifest("demo", presets={"A": "pkg.mod:A"}, environments={"Env-v1": "pkg.env"})
    assert dict(m.presets) == {"A": "pkg.mod:A"}
    with pytest.raises(TypeError):
        m.presets["B"] = "x:y"  # read-only copy
    for bad in ("", " x", "a.b"):
        with pytest.raises(ValueError):
            ScenarioManifest(bad)
    with pytest.raises(ValueError, match="dots"):
        ScenarioManifest("demo", presets={"a.b": "pkg:A"})
    with pytest.raises(ValueError, match="module.path:ClassName"):
        ScenarioManifest("demo", presets={"A": "pkg.A"})
    with pytest.raises(ValueError, match="module path"):
        ScenarioManifest("demo", environments={"Env-v1": "pkg:env"})


def test_component_names():
    assert _split("cube.PickPlace") == ("cube", "PickPlace")
    for bad in ("cube", "a.b.c", ".X", "cube."):
        with pytest.raises(ScenarioError):
            _split(bad)


def test_builtin_scenarios_are_discovered():
    ids = [m.id for m in list_scenarios()]
    assert "cube" in ids
    assert "PickPlace" in get_scenario("cube").presets
    with pytest.raises(ScenarioError, match="unknown scenario"):
        get_scenario("nope")


def test_listing_does_not_import_the_simulator():
    code = (
        "import sys; from magma_core.scenarios import list_scenarios; list_scenarios();"
        "bad = [m for m in ('mani_skill', 'sapien') if m in sys.modules]; print(bad); sys.exit(bool(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
