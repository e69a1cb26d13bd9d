"""MAGMA core: the scenario contract, the simulation layer and the one execution engine.

Importing this package never imports the simulator (mani_skill / sapien); only
``magma_core.simulation.envs`` and ``magma_core.simulation.motion`` do.
"""

__version__ = "0.1.0"
