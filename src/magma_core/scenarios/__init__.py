"""Scenario providers: manifests, discovery by entry point, and loading of presets and definitions."""

from magma_core.scenarios.manifest import ScenarioManifest
from magma_core.scenarios.registry import (
    ENTRY_POINT_GROUP,
    ScenarioError,
    clear_cache,
    get_scenario,
    list_scenarios,
    load_definition,
    load_preset,
    load_skills,
    load_target,
    provider_problems,
    register_environments,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ScenarioError",
    "ScenarioManifest",
    "clear_cache",
    "get_scenario",
    "list_scenarios",
    "load_definition",
    "load_preset",
    "load_target",
    "load_skills",
    "provider_problems",
    "register_environments",
]
