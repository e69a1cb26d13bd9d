"""The MAGMA taskset for ``verifiers`` (v1), under the top-level name its loader imports:
``--taskset.id magma-verifiers``. Everything is in :mod:`magma_core.rl.verifiers_adapter`."""

from magma_core.rl.verifiers_adapter import (
    MagmaConfig,
    MagmaData,
    MagmaEnv,
    MagmaEnvConfig,
    MagmaTask,
    MagmaTaskset,
)

__all__ = ["MagmaConfig", "MagmaData", "MagmaEnv", "MagmaEnvConfig", "MagmaTask", "MagmaTaskset"]
