"""Discovery of scenario providers (entry-point group ``magma.scenarios``) and component loading.

Listing reads manifests only; it never imports the simulator. Loading a preset first imports the
modules that register the scenario's environments, then the class.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.resources
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from magma_core.scenarios.manifest import ScenarioManifest
from magma_core.user_error import UserError

ENTRY_POINT_GROUP = "magma.scenarios"


class ScenarioError(UserError):
    """A scenario provider or component cannot be found or loaded (one-line message)."""


@dataclass(frozen=True)
class Provider:
    manifest: ScenarioManifest
    source: str  # "distribution: entry.point = module:attr"


def _load_entry_point(ep: Any) -> Provider:
    dist = getattr(getattr(ep, "dist", None), "name", "?")
    source = f"{dist}: {ep.name} = {ep.value}"
    try:
        manifest = ep.load()
    except Exception as exc:  # a broken provider must not hide the others' names
        raise ScenarioError(f"scenario provider {source} failed to load: {exc}") from exc
    if not isinstance(manifest, ScenarioManifest):
        raise ScenarioError(f"scenario provider {source} is not a ScenarioManifest")
    if manifest.id != ep.name:
        raise ScenarioError(
            f"scenario provider {source} declares id {manifest.id!r}; the entry-point name must equal it"
        )
    return Provider(manifest, source)


@dataclass
class _Discovery:
    """The providers that loaded, by scenario id, and one line per provider that did not
    (by the scenario id or entry-point name it was installed under)."""

    found: dict[str, Provider]
    problems: dict[str, str]


@lru_cache(maxsize=1)
def _discover() -> _Discovery:
    """Every installed provider; a broken one (it fails to load, declares another id, shares
    an id or an env id) is left out with its problem, and the others still list."""
    found: dict[str, Provider] = {}
    problems: dict[str, str] = {}
    duplicates: set[str] = set()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            provider = _load_entry_point(ep)
        except ScenarioError as exc:
            problems[ep.name] = str(exc)
            continue
        sid = provider.manifest.id
        previous = found.get(sid)
        if previous is not None and previous.source != provider.source:
            problems[sid] = (f"duplicate scenario id {sid!r}: {previous.source} and "
                             f"{provider.source}; neither is loaded until one is renamed")
            duplicates.add(sid)
            continue
        found[sid] = provider
    for sid in duplicates:
        found.pop(sid, None)
    _check_environments(found, problems)
    return _Discovery(found, problems)


def _providers() -> dict[str, Provider]:
    return _discover().found


def _check_environments(found: dict[str, Provider], problems: dict[str, str]) -> None:
    """Leave out (with its problem) a scenario that registers an env id another scenario
    registers from another module."""
    owners: dict[str, tuple[str, str]] = {}
    clashing: list[str] = []
    for sid, provider in sorted(found.items()):
        clash = next((env_id for env_id, module in provider.manifest.environments.items()
                      if env_id in owners and owners[env_id][1] != module), None)
        if clash is not None:
            module = provider.manifest.environments[clash]
            problems[sid] = (f"env {clash!r} is registered by {owners[clash][1]} "
                             f"({owners[clash][0]}) and by {module} ({sid}); {sid} is not loaded")
            clashing.append(sid)
            continue
        for env_id, module in provider.manifest.environments.items():
            owners[env_id] = (sid, module)
    for sid in clashing:
        del found[sid]


def provider_problems() -> list[str]:
    """One line per installed scenario provider that could not be used (with its package)."""
    return [line for _, line in sorted(_discover().problems.items())]


def clear_cache() -> None:
    """Forget discovered providers (after installing a package in the same process)."""
    _discover.cache_clear()


def list_scenarios() -> list[ScenarioManifest]:
    """Every installed scenario's manifest, sorted by id."""
    return [p.manifest for _, p in sorted(_providers().items())]


def get_scenario(scenario_id: str) -> ScenarioManifest:
    discovery = _discover()
    providers = discovery.found
    if scenario_id not in providers:
        if scenario_id in discovery.problems:
            raise ScenarioError(discovery.problems[scenario_id])
        known = ", ".join(sorted(providers)) or "none"
        broken = (f"; {len(discovery.problems)} provider(s) could not be loaded: magma "
                  "scenarios list says why" if discovery.problems else "")
        raise ScenarioError(f"unknown scenario {scenario_id!r} (installed: {known}){broken}")
    return providers[scenario_id].manifest


def register_environments(scenario_id: str) -> list[str]:
    """Import the modules that register the scenario's gym envs; return the env ids.

    An env id the manifest names but its module did not register is a one-line
    :class:`ScenarioError` naming the manifest and the key (with the closest registered id)."""
    manifest = get_scenario(scenario_id)
    for env_id, module in manifest.environments.items():
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise ScenarioError(f"cannot import {module} (registers {env_id}): {exc}{where(exc)}") from exc
    registered = _registered_env_ids()
    for env_id, module in manifest.environments.items():
        if registered is not None and env_id not in registered:
            close = difflib.get_close_matches(env_id, sorted(registered), n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ScenarioError(
                f"scenario manifest {scenario_id} ({_providers()[scenario_id].source}): "
                f"environments key "
                f"{env_id!r} is not an env id that importing {module} registers{hint}")
    return list(manifest.environments)


def where(exc: BaseException) -> str:
    """`` (at FILE:LINE)``: the innermost frame of ``exc``'s traceback outside the Python
    runtime and MAGMA's loader (the scenario's own line), or ``""`` when there is none; a
    ``SyntaxError`` names its own file and line."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" (at {exc.filename}:{exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "importlib" not in f.filename and not f.filename.startswith("<")
              and f.filename != __file__]
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _registered_env_ids() -> set[str] | None:
    """The env ids registered with ManiSkill, or None when no imported module loaded it.

    Read from the module already imported (this layer never imports the simulator itself;
    ``SimBatch`` checks the task's env id where envs are made)."""
    registration = sys.modules.get("mani_skill.utils.registration")
    envs = getattr(registration, "REGISTERED_ENVS", None)
    return set(envs) if isinstance(envs, dict) else None


def _split(component: str) -> tuple[str, str]:
    if not isinstance(component, str) or component.count(".") != 1:
        raise ScenarioError(f"{component!r} is not a preset name: use 'scenario.Name' (magma scenarios list)")
    scenario_id, name = component.split(".")
    if not scenario_id or not name:
        raise ScenarioError(f"{component!r} is not a preset name: use 'scenario.Name' (magma scenarios list)")
    return scenario_id, name


def _import_target(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ScenarioError(f"cannot import {module_name}: {exc}{where(exc)}") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ScenarioError(f"{module_name} has no {attr}") from None


def _import_class(target: str, base: type) -> type:
    """The class ``target`` (``module:attr``) names, which must subclass ``base``."""
    cls = _import_target(target)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ScenarioError(f"{target} is not a {base.__name__} subclass")
    return cls


def _load_named(component: str, kind: str, base: type) -> type:
    """``"scenario.Name"`` from the manifest's ``kind``s (``preset`` or ``definition``): its
    envs registered, its class imported and checked against ``base``."""
    scenario_id, name = _split(component)
    manifest = get_scenario(scenario_id)
    targets = getattr(manifest, f"{kind}s")
    if name not in targets:
        known = ", ".join(sorted(targets)) or "none"
        raise ScenarioError(f"scenario {scenario_id!r} has no {kind} {name!r} ({kind}s: {known})")
    register_environments(scenario_id)
    return _import_class(targets[name], base)


def load_preset(component: str) -> type:
    """Load ``"scenario.Name"``: register the scenario's envs, import the class, check it is a
    ``BaseTask`` subclass, return the class."""
    from magma_core.simulation.tasks import BaseTask

    return _load_named(component, "preset", BaseTask)


def load_definition(component: str) -> type:
    """Load ``"scenario.Name"`` from the scenario's definitions: register its envs, import the
    class, check it is a ``TaskDefinition`` subclass, return the class."""
    from magma_core.simulation.tasks import TaskDefinition

    return _load_named(component, "definition", TaskDefinition)


def load_target(component: str) -> type:
    """A preset (``BaseTask`` subclass) or a definition (``TaskDefinition`` subclass) named
    ``"scenario.Name"``; presets win when a scenario declares both names."""
    scenario_id, name = _split(component)
    manifest = get_scenario(scenario_id)
    if name in manifest.presets or name not in manifest.definitions:
        if name not in manifest.presets:
            known = f"presets: {', '.join(sorted(manifest.presets)) or 'none'}"
            if manifest.definitions:
                known += f"; definitions: {', '.join(sorted(manifest.definitions))}"
            raise ScenarioError(f"scenario {scenario_id!r} has no preset {name!r} ({known})")
        return load_preset(component)
    return load_definition(component)


def load_skills(component: str, names: Sequence[str]) -> list[type]:
    """The skill classes ``names`` of the scenario of ``component`` (``scenario.Name``) from its
    manifest's ``skills`` mapping; ``["all"]`` loads every one. Unknown names: ``ScenarioError``."""
    from magma_core.simulation.skills import BaseSkill

    scenario_id, _ = _split(component)
    manifest = get_scenario(scenario_id)
    names = list(names)
    if names == ["all"]:
        names = list(manifest.skills)
    unknown = [n for n in names if n not in manifest.skills]
    if unknown:
        known = ", ".join(sorted(manifest.skills)) or "none"
        raise ScenarioError(f"scenario {scenario_id!r} has no skill {unknown[0]!r} (skills: {known})")
    return [_import_class(manifest.skills[name], BaseSkill) for name in names]


def find_suite(name: str) -> Path | None:
    """The spec YAML of the benchmark suite ``name`` that an installed scenario declares
    (``ScenarioManifest.suites``), or None when none does; two scenarios declaring the same
    name is a ``ScenarioError`` (name it as a path instead)."""
    found = [(m.id, m.suites[name]) for m in list_scenarios() if name in m.suites]
    if len(found) > 1:
        raise ScenarioError(f"suite {name!r} is declared by scenarios "
                            f"{', '.join(i for i, _ in found)}; give the spec's path")
    if not found:
        return None
    package, _, resource = found[0][1].partition(":")
    try:
        root = importlib.resources.files(package)
    except (ModuleNotFoundError, TypeError) as exc:
        raise ScenarioError(f"scenario {found[0][0]!r}: cannot find package {package}: {exc}") from None
    return Path(str(root.joinpath(resource)))


def default_transforms(components: Sequence[str]) -> str:
    """The condition-transform module of the scenarios that ``components`` (``scenario.Name``)
    belong to, as their manifests declare it (``ScenarioManifest.transforms``)."""
    declared = {get_scenario(_split(c)[0]).transforms for c in components}
    if len(declared) != 1 or "" in declared:
        scenarios = ", ".join(sorted({_split(c)[0] for c in components})) or "none"
        raise ScenarioError(
            f"the suite's scenarios ({scenarios}) do not declare one module of condition "
            "transforms; give the suite spec a 'transforms' key")
    return declared.pop()
