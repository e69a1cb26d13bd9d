"""The MAGMA taskset for ``verifiers`` (v1), under the top-level name its loader imports:
``--taskset.id magma-verifiers``. Everything is in :mod:`magma_core.rl.verifiers_adapter`.

Why a top-level package of its own (kept, not folded into ``magma_core``): verifiers v1 loads
a taskset by name, not by path. ``verifiers.v1.utils.loaders`` (0.4) strips an id's
``owner/`` and ``@version``, imports the module ``id.replace("-", "_").lower()`` (or the
built-in ``verifiers.v1.tasksets.<that>``), and takes the one ``Taskset`` subclass, and the
one ``Env`` subclass, that the module's ``__all__`` exports. So the id users type (and a hub
id ``owner/magma-verifiers@1``) must resolve to an importable top-level module whose
``__all__`` holds exactly these classes: this one. It holds no code.
"""

from magma_core.rl.verifiers_adapter import (
    MagmaConfig,
    MagmaData,
    MagmaEnv,
    MagmaEnvConfig,
    MagmaTask,
    MagmaTaskset,
)

__all__ = ["MagmaConfig", "MagmaData", "MagmaEnv", "MagmaEnvConfig", "MagmaTask", "MagmaTaskset"]
