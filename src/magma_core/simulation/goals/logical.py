"""Combinations of goals: ``And`` (element-wise minimum) and ``Or`` (element-wise maximum)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from magma_core.simulation.goals.base import BaseGoal, check_score


class _GoalList(BaseGoal):
    def __init__(self, goal_list: Sequence[BaseGoal]) -> None:
        goal_list = list(goal_list)
        if not goal_list:
            raise ValueError(f"{type(self).__name__} needs at least one goal")
        for goal in goal_list:
            if not isinstance(goal, BaseGoal):
                raise TypeError(f"{type(self).__name__} takes goals, got {type(goal).__name__}")
        self.goal_list = goal_list

    def _scores(self, obs: dict[str, object]) -> torch.Tensor:
        scores = [check_score(g.verify(obs), None, f"{g.get_name()}.verify") for g in self.goal_list]
        if len({s.shape[0] for s in scores}) != 1:
            raise ValueError(f"{type(self).__name__}: sub-goals disagree on the number of envs")
        return torch.stack(scores)


class And(_GoalList):
    """Satisfied when every sub-goal is: the element-wise minimum of their scores."""

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        return self._scores(obs).amin(dim=0)


class Or(_GoalList):
    """1 if any sub-goal is 1, else 0 if any is 0, else -1: the element-wise maximum."""

    def verify(self, obs: dict[str, object]) -> torch.Tensor:
        return self._scores(obs).amax(dim=0)
