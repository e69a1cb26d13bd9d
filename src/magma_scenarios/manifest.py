"""``ScenarioManifest`` at the import path scenario packages use (``magma_scenarios.manifest``,
as the predecessor's documentation has it); the class lives in ``magma_core.scenarios``.
The built-in scenarios' own manifests are in ``magma_scenarios.builtin_manifests``."""

from magma_core.scenarios.manifest import ScenarioManifest

__all__ = ["ScenarioManifest"]
