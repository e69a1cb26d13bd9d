"""Re-export of ``ScenarioManifest`` for scenario packages written against this import path."""

from magma_core.scenarios.manifest import ScenarioManifest

__all__ = ["ScenarioManifest"]
