"""Bridges from MAGMA to the tools its users already work in, each an optional extra.

- :mod:`magma_core.integrations.inspect`: a MAGMA suite as an Inspect AI task;
- :mod:`magma_core.integrations.openenv`: the ``rl`` environment served as an OpenEnv environment;
- :mod:`magma_core.integrations.lerobot`: episodes exported as a LeRobot v3 dataset.

Each subpackage imports its library only where it is used, so the mapping code (MAGMA's side
of each bridge) is importable and tested without the library; ``make test-bridges`` runs each
bridge against the real library in a venv of its own. This package sits on layer 8, beside
``cli`` and ``view``: it may use every driver, and nothing in ``magma_core`` imports it.
"""
