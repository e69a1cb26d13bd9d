"""MAGMA's built-in scenarios (content only: worlds, tools, stages, presets, traces).

Each scenario lives in its own folder and is declared in ``magma_scenarios.builtin_manifests``;
the manifests are registered under the ``magma.scenarios`` entry-point group.
"""
