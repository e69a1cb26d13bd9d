"""``BaseStageComposite``: experimental and unsupported; constructing one raises."""

from __future__ import annotations

from collections.abc import Sequence

from magma_core.simulation.data_structures import StageInput
from magma_core.simulation.stage.base import BaseTaskStage


class BaseStageComposite(BaseTaskStage):
    """Reserved name for a stage made of repeated sub-stages. Not supported: use an ordinary
    sequence of stages. Constructing one raises ``NotImplementedError``."""

    def __init__(self, stages: Sequence[BaseTaskStage], number_per_stage: Sequence[int],
                 stage_input: StageInput) -> None:
        raise NotImplementedError(
            "BaseStageComposite is experimental and unsupported; use a sequence of stages"
        )
