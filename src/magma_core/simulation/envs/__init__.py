"""Layer 4: MAGMA worlds on ManiSkill 3 and the N-slot ``SimBatch``.

Importing this package imports mani_skill and sapien, and installs the headless
``RenderMaterial`` stand-in when the machine has no render device (see ``headless``).
"""

from magma_core.simulation.envs.default_env import DefaultEnv, DefaultMultiAgentEnv
from magma_core.simulation.envs.sim_batch import SimBatch, WorldSnapshot

__all__ = ["DefaultEnv", "DefaultMultiAgentEnv", "SimBatch", "WorldSnapshot"]
