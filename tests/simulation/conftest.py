"""Shared simulator fixtures: one 3-slot and one 1-slot cube batch per test session.

Creating envs costs ~0.3 s each and importing ManiSkill ~5 s, so batches are shared;
the function-scoped fixtures reset them (seed 0) so every test starts from the same world.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def _cube3() -> Iterator[object]:
    import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
    from magma_core.simulation.envs import SimBatch

    batch = SimBatch("MagmaCube-v1", 3, seed=0, backend="cpu")
    yield batch
    batch.close()


@pytest.fixture(scope="session")
def _cube1() -> Iterator[object]:
    import magma_scenarios.cube.env  # noqa: F401
    from magma_core.simulation.envs import SimBatch

    batch = SimBatch("MagmaCube-v1", 1, seed=0, backend="cpu")
    yield batch
    batch.close()


@pytest.fixture
def batch3(_cube3):
    """The shared 3-slot cube batch, freshly reset (slot i seeded with i)."""
    _cube3.reset(seed=0)
    return _cube3


@pytest.fixture
def batch1(_cube1):
    """The shared 1-slot cube batch, freshly reset with seed 0."""
    _cube1.reset(seed=0)
    return _cube1
