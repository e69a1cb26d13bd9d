"""Goals: per-env checks of the world a stage must reach.

``verify(obs)`` returns one score per env: 1 satisfied, 0 not yet, -1 failed for good.
Positional goals read ``obs["extra"][name]``: a ``[N, 7]`` pose tensor or a dict holding one
under ``"pose"``; containment compares XY distances with a threshold.
"""

from magma_core.simulation.goals.base import BaseGoal, object_xy
from magma_core.simulation.goals.counting import AtLeastCountAt, ExactCountAt, MaxAt, On
from magma_core.simulation.goals.logical import And, Or
from magma_core.simulation.goals.positional import At, CountAt, NotAt

__all__ = [
    "And",
    "At",
    "AtLeastCountAt",
    "BaseGoal",
    "CountAt",
    "ExactCountAt",
    "MaxAt",
    "NotAt",
    "On",
    "Or",
    "object_xy",
]
