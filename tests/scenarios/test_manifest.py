"""Scenario manifests and discovery of the installed providers."""

import subprocess
import sys

import pytest

from magma_core.scenarios import (
    ScenarioError,
    ScenarioManifest,
    get_scenario,
    list_scenarios,
    provider_problems,
)
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


def test_an_unknown_manifest_key_names_the_manifest_and_the_key():
    with pytest.raises(TypeError) as info:
        ScenarioManifest("demo", enviroments={"Env-v1": "pkg.env"})
    assert str(info.value).startswith(
        "ScenarioManifest 'demo': unknown key 'enviroments' (did you mean 'environments'?")
    with pytest.raises(TypeError, match="ScenarioManifest 'demo': unknown key 'preset'"):
        ScenarioManifest(id="demo", preset={})


@pytest.mark.sim
def test_a_manifest_env_id_its_module_does_not_register_is_refused(providers):
    from magma_core.scenarios import load_preset, register_environments

    providers(_EntryPoint("t", ScenarioManifest("t", presets={
        "P": "magma_scenarios.cube.presets:PickPlace"},
        environments={"MagmaCube-v2": "magma_scenarios.cube.env"}), dist="typo-pkg"))
    message = ("scenario manifest t (typo-pkg: t = typo-pkg.manifest:SCENARIO): environments "
               "key 'MagmaCube-v2' is not an env id that importing magma_scenarios.cube.env "
               "registers; did you mean 'MagmaCube-v1'?")
    for load in (lambda: register_environments("t"), lambda: load_preset("t.P")):
        with pytest.raises(ScenarioError) as info:
            load()
        assert str(info.value) == message


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


class _EntryPoint:
    """Stands in for an installed entry point (name, value, dist, load)."""

    def __init__(self, name, manifest, dist="pkg", value=None):
        self.name, self._manifest = name, manifest
        self.value = value or f"{dist}.manifest:SCENARIO"
        self.dist = type("Dist", (), {"name": dist})()

    def load(self):
        if isinstance(self._manifest, Exception):
            raise self._manifest
        return self._manifest


@pytest.fixture
def providers(monkeypatch):
    from magma_core.scenarios import registry

    def install(*eps):
        monkeypatch.setattr(registry, "entry_points", lambda group: list(eps))
        registry.clear_cache()

    yield install
    registry.clear_cache()


def test_duplicate_ids_name_both_providers_and_the_others_still_list(providers):
    providers(
        _EntryPoint("dup", ScenarioManifest("dup"), dist="first"),
        _EntryPoint("dup", ScenarioManifest("dup"), dist="second"),
        _EntryPoint("fine", ScenarioManifest("fine"), dist="third"),
    )
    assert [m.id for m in list_scenarios()] == ["fine"]
    (problem,) = provider_problems()
    assert "duplicate scenario id 'dup'" in problem and "first" in problem and "second" in problem
    with pytest.raises(ScenarioError, match="duplicate scenario id 'dup'"):
        get_scenario("dup")
    with pytest.raises(ScenarioError, match="1 provider\\(s\\) could not be loaded"):
        get_scenario("nope")


def test_entry_point_name_must_equal_the_id(providers):
    providers(_EntryPoint("alias", ScenarioManifest("real"), dist="aliasing-pkg"))
    assert list_scenarios() == []
    (problem,) = provider_problems()
    assert "entry-point name must equal it" in problem and "aliasing-pkg" in problem


def test_env_ids_shared_only_with_the_same_module(providers):
    same = ScenarioManifest("a", environments={"Env-v1": "pkg.env"})
    providers(_EntryPoint("a", same), _EntryPoint("b", ScenarioManifest(
        "b", environments={"Env-v1": "pkg.env"}), dist="other"))
    assert [m.id for m in list_scenarios()] == ["a", "b"]
    providers(_EntryPoint("a", same), _EntryPoint("b", ScenarioManifest(
        "b", environments={"Env-v1": "other.env"}), dist="other"))
    assert [m.id for m in list_scenarios()] == ["a"]
    with pytest.raises(ScenarioError, match="Env-v1"):
        get_scenario("b")


def test_a_broken_provider_is_reported_with_its_package_and_the_others_list(providers):
    providers(_EntryPoint("x", ImportError("no module named foo"), dist="broken-pkg"),
              _EntryPoint("y", {"id": "y"}, dist="wrong-pkg"),
              _EntryPoint("ok", ScenarioManifest("ok")))
    assert [m.id for m in list_scenarios()] == ["ok"]
    problems = provider_problems()
    assert "broken-pkg" in problems[0] and "failed to load: no module named foo" in problems[0]
    assert "wrong-pkg" in problems[1] and "is not a ScenarioManifest" in problems[1]
    with pytest.raises(ScenarioError, match="failed to load: no module named foo"):
        get_scenario("x")


def test_load_preset_checks_the_class(providers):
    from magma_core.scenarios import load_preset

    providers(_EntryPoint("t", ScenarioManifest("t", presets={
        "NotTask": "magma_core.scenarios.manifest:ScenarioManifest",
        "Missing": "magma_core.scenarios.manifest:Nope",
        "NoModule": "no_such_module_xyz:Task",
    })))
    with pytest.raises(ScenarioError, match="not a BaseTask subclass"):
        load_preset("t.NotTask")
    with pytest.raises(ScenarioError, match="has no Nope"):
        load_preset("t.Missing")
    with pytest.raises(ScenarioError, match="cannot import no_such_module_xyz"):
        load_preset("t.NoModule")
    with pytest.raises(ScenarioError, match="has no preset 'Other'"):
        load_preset("t.Other")
