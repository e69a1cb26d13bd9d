"""``StateCamera``: renders stored world states through a world's camera, after the run.

A run stores each decision's world state compactly (actor poses, articulation root poses and
joint positions: see ``magma_core.simulation.executor.world``). ``StateCamera`` builds the
world once with a render backend (one slot, never stepped), writes such a state into it and
renders the human-render camera (``render_camera``, placed like the ``overview`` camera) at
the size asked for. Velocities are zero and the world's extra state keeps its reset value:
a picture needs poses only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from magma_core.simulation.data_structures.state_tree import StateNode, StateTree
from magma_core.simulation.envs.cameras import render_unavailable
from magma_core.simulation.envs.sim_batch import SimBatch

__all__ = ["StateCamera"]


class StateCamera:
    """One world built to render compact states (see the module docstring).

    Raises ``RuntimeError`` with :func:`render_unavailable`'s line when nothing can render.
    """

    def __init__(
        self,
        env_id: str,
        *,
        env_options: Mapping[str, object] | None = None,
        reset_options: Mapping[str, object] | None = None,
        width: int = 960,
        height: int = 552,
        seed: int = 0,
        backend: str = "auto",
    ) -> None:
        reason = render_unavailable()
        if reason is not None:
            raise RuntimeError(reason)
        options = dict(env_options or {})
        options["human_render_camera_configs"] = {"width": int(width), "height": int(height)}
        self.sim = SimBatch(env_id, 1, seed=seed, env_options=options, backend=backend,
                            reset_options=reset_options, fresh_scene=False, render=True)
        self.size = (int(width), int(height))
        self._base = self.sim.get_state()

    def frame(self, state: Mapping[str, object]) -> np.ndarray:
        """The picture (uint8 ``height x width x 3``) of one compact world state."""
        tree = _place(self._base, state)
        self.sim.set_state(tree)
        env = self.sim.envs[0]
        image = env.render_rgb_array("render_camera")
        image = image[0] if image.dim() == 4 else image
        return image[..., :3].detach().cpu().numpy().astype(np.uint8)

    def close(self) -> None:
        self.sim.close()


def _place(base: Mapping[str, StateNode], state: Mapping[str, object]) -> StateTree:
    """``base`` (a batched state of one slot) with the poses and joint positions of the
    compact ``state`` written in, and every velocity zero."""
    tree: StateTree = {key: dict(value) if isinstance(value, Mapping) else value
                            for key, value in base.items()}
    actors = tree.get("actors", {})
    for name, pose in (state.get("actors") or {}).items():
        if name in actors and len(pose) >= 7:
            row = actors[name].clone()
            row[0, :7] = torch.as_tensor(pose[:7], dtype=row.dtype)
            row[0, 7:] = 0
            actors[name] = row
    articulations = tree.get("articulations", {})
    for name, parts in (state.get("articulations") or {}).items():
        if name not in articulations:
            continue
        row = articulations[name].clone()
        dof = (row.shape[1] - 13) // 2
        pose, qpos = parts.get("pose") or [], parts.get("qpos") or []
        if len(pose) >= 7:
            row[0, :7] = torch.as_tensor(pose[:7], dtype=row.dtype)
        row[0, 7:13] = 0
        if len(qpos) == dof:
            row[0, 13:13 + dof] = torch.as_tensor(qpos, dtype=row.dtype)
        row[0, 13 + dof:] = 0
        articulations[name] = row
    return tree
