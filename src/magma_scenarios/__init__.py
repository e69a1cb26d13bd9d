"""MAGMA's built-in scenarios (content only: worlds, tools, stages, presets, traces).

Each scenario lives in its own folder and is declared in ``magma_scenarios.builtin_manifests``;
the manifests are registered under the ``magma.scenarios`` entry-point group.

The provider helpers live here at the predecessor's paths (every installed provider, not
only the built-in ones): ``list_scenarios()`` (the ids), ``get_scenario(id)`` (its manifest,
no environment registered), ``load_preset("s.Name")`` / ``load_definition("s.Name")`` (the
class, after the scenario's environments are registered), ``load_skills("s.Name", names)``
(``["all"]``: every skill of the manifest) and ``register_environment(env_id)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from magma_core.scenarios import ScenarioError, ScenarioManifest
from magma_core.scenarios import get_scenario as _get_scenario
from magma_core.scenarios import list_scenarios as _list_manifests
from magma_core.scenarios import load_definition as _load_definition
from magma_core.scenarios import load_preset as _load_preset
from magma_core.scenarios import load_skills as _load_skills

__all__ = ["get_scenario", "list_scenarios", "load_definition", "load_preset", "load_skills",
           "register_environment"]


def list_scenarios() -> list[str]:
    """The ids of every installed scenario, sorted."""
    return [manifest.id for manifest in _list_manifests()]


def get_scenario(scenario_id: str) -> ScenarioManifest:
    """The manifest of ``scenario_id`` (read-only; no environment is registered)."""
    return _get_scenario(scenario_id)


def load_preset(component: str) -> type:
    """The preset class ``scenario.Name`` (a ``BaseTask`` subclass), its scenario's
    environments registered first."""
    return _load_preset(component)


def load_definition(component: str) -> type:
    """The definition class ``scenario.Name`` (a ``TaskDefinition`` subclass)."""
    return _load_definition(component)


def load_skills(component: str, names: Sequence[str] = ("all",)) -> list[type]:
    """The skill classes ``names`` of the scenario of ``component`` (``["all"]``: every one)."""
    return _load_skills(component, list(names))


def register_environment(env_id: str) -> None:
    """Import the module an installed scenario declares for the gym env ``env_id`` and check
    that it registered it; ``ScenarioError`` when no scenario declares it or it did not."""
    owners = [(m.id, m.environments[env_id]) for m in _list_manifests() if env_id in m.environments]
    if not owners:
        raise ScenarioError(f"no installed scenario declares the environment {env_id!r}")
    scenario_id, module = owners[0]
    try:
        importlib.import_module(module)
    except Exception as exc:
        raise ScenarioError(f"cannot import {module} (registers {env_id}): {exc}") from exc
    from mani_skill.utils.registration import REGISTERED_ENVS  # the simulator: only on demand

    if env_id not in REGISTERED_ENVS:
        raise ScenarioError(f"{module} (scenario {scenario_id}) was imported but did not "
                            f"register the environment {env_id!r}")
