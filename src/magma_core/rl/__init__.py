"""The live environment for trainers (layer 7, on ``runs`` and ``store``).

Groups of G rollouts that start from one saved world (a whole-slot snapshot), driven through
chat messages the way the ``openai:`` agent talks to a model, executed by the one engine, with
rewards from its verdicts and every rollout stored as a run episode.

- :class:`~magma_core.rl.tasks.TaskSource`: presets, definitions with seeds, suite items;
  :mod:`magma_core.rl.starts`: stored situations (generation nodes, failed bench trials).
- :class:`~magma_core.rl.env.TrainingEnv`: ``group(item, size)`` → :class:`~magma_core.rl.env.Group`
  of :class:`~magma_core.rl.env.Rollout` s with ``reset()`` / ``step(message)`` / ``astep``.
- :class:`~magma_core.rl.rewards.Reward`: the default reward (formula in its module).
- Adapters (optional extra ``magma[rl]``): :mod:`magma_core.rl.trl_adapter` (TRL's
  ``GRPOTrainer``), :mod:`magma_core.rl.verifiers_adapter` (a ``verifiers`` environment).
"""

from magma_core.rl.env import Group, Observation, Rollout, StepResult, TrainingEnv
from magma_core.rl.rewards import Reward, RewardFn, score
from magma_core.rl.tasks import StoredStart, TaskItem, TaskSource

__all__ = ["Group", "Observation", "Reward", "RewardFn", "Rollout", "StepResult", "StoredStart",
           "TaskItem", "TaskSource", "TrainingEnv", "score"]
