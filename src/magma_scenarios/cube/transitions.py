"""Entry transitions of the cube world (as in the seed on environment state)."""

import torch

from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition


class MoveCubeAtEntry(BaseStageEnvironmentTransition):
    """Someone moves the cube: its x becomes ``x`` in the selected slots."""

    def __init__(self, x: float) -> None:
        self.x = x

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        actor = env_state["actors"]["cube"]
        indices = env_ids.to(actor.device)
        actor[indices, 0] = self.x
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"x": self.x}
