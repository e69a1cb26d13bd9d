"""Shared sorting-world batches: ManiSkill costs ~5 s to import and each env ~0.2 s to build,
so every test module reuses these session-wide batches (reset by the tests that use them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def _batch(env_id: str, num_slots: int, **env_options: object) -> object:
    import magma_scenarios.sorting.env  # noqa: F401  (registers the sorting worlds)
    from magma_core.simulation.envs import SimBatch

    return SimBatch(env_id, num_slots, seed=0, env_options=env_options, backend="cpu")


@pytest.fixture(scope="session")
def sorting6() -> Iterator[object]:
    """``MagmaSorting-v1`` with six cubes and three zones, two slots (seeds 0 and 1)."""
    batch = _batch("MagmaSorting-v1", 2, num_cubes=6)
    yield batch
    batch.close()


@pytest.fixture(scope="session")
def duo6() -> Iterator[object]:
    """``MagmaSortingDuo-v1`` with six cubes and three zones, two slots (seeds 0 and 1)."""
    batch = _batch("MagmaSortingDuo-v1", 2, num_cubes=6)
    yield batch
    batch.close()
