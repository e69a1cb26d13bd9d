"""What the goals say, in words: the unmet goals of a stage that failed, and the stages
whose goals already hold when they start.

A failed or exceeded stage's episode reason names each goal that did not hold at the last
verification, with its score and the last observed position of every object or area the
goal names (``At(obj='block', area='target_a', thresh=0.06) = 0; block at (0.120, -0.100,
0.020), target_a at (0.000, 0.150, 0.001)``). A stage whose goals all hold when it starts
(after its entry transition) would be verified complete on the agent's first call: that is
a scenario bug, recorded as a warning of the episode (``EpisodeRecord.warnings``) when the
stage starts, which the run loop reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from magma_core.simulation.executor.verification import slice_obs
from magma_core.simulation.stage import BaseTaskStage

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.slots import EngineContext, SlotState
    from magma_core.simulation.goals.base import BaseGoal

MAX_GOALS_NAMED = 6


def goal_scores(stage: BaseTaskStage, obs: dict[str, object]) -> list[tuple[BaseGoal, int | None]]:
    """``(goal, score)`` of each goal of ``stage`` on a one-slot observation; None for a goal
    that raised or returned no score (the verification itself reports those)."""
    out: list[tuple[BaseGoal, int | None]] = []
    for goal in stage.goals:
        try:
            score = goal.verify(obs)
            value: int | None = int(torch.as_tensor(score).reshape(-1)[0])
        except Exception:  # noqa: BLE001 - a broken goal is the verification's to report
            value = None
        out.append((goal, value))
    return out


def _positions(goal: BaseGoal, obs: dict[str, object]) -> list[str]:
    """``name at (x, y, z)`` for each string attribute of ``goal`` naming an observed pose."""
    extra = obs.get("extra") if isinstance(obs, dict) else None
    if not isinstance(extra, dict):
        return []
    seen: list[str] = []
    for value in vars(goal).values():
        names = value if isinstance(value, (list, tuple)) else [value]
        for name in names:
            if isinstance(name, str) and name in extra and name not in seen:
                seen.append(name)
    out = []
    for name in seen:
        entry = extra[name]
        entry = entry.get("pose") if isinstance(entry, dict) else entry
        if isinstance(entry, torch.Tensor) and entry.ndim == 2 and entry.shape[1] >= 3:
            x, y, z = (float(v) for v in entry[0, :3])
            out.append(f"{name} at ({x:.3f}, {y:.3f}, {z:.3f})")
    return out


def unmet_goals(stage: BaseTaskStage, obs: dict[str, object] | None) -> str:
    """`` Unmet goals: GOAL = SCORE (positions); ...`` for the goals of ``stage`` that do
    not hold on the one-slot ``obs`` (its last verification); "" when there is none to name."""
    if obs is None or not stage.goals:
        return ""
    parts = []
    for goal, score in goal_scores(stage, obs):
        if score == 1:
            continue
        shown = "no score" if score is None else str(score)
        where = _positions(goal, obs)
        parts.append(f"{goal!r} = {shown}" + (f" ({', '.join(where)})" if where else ""))
    if not parts:
        return ""
    more = f"; and {len(parts) - MAX_GOALS_NAMED} more" if len(parts) > MAX_GOALS_NAMED else ""
    return " Unmet goals at the last verification: " + "; ".join(parts[:MAX_GOALS_NAMED]) + more + "."


def already_met_warning(stage: BaseTaskStage, index: int, obs: dict[str, object]) -> str | None:
    """The warning for an action stage whose goals all hold on ``obs`` at its start (None
    otherwise, and for text-only stages, stages without goals or with a log check)."""
    if stage.is_text_only() or not stage.goals or stage.has_log_verification():
        return None
    scores = goal_scores(stage, obs)
    if not all(score == 1 for _, score in scores):
        return None
    goals = ", ".join(repr(goal) for goal, _ in scores)
    return (f"scenario warning: every goal of stage {index} ({type(stage).__name__}) already "
            f"holds when the stage starts ({goals}): the stage is verified complete on the "
            "agent's first call whatever it does; check the stage's goals and the world's "
            "initial state")


def note_stage_start(ctx: EngineContext, state: SlotState, obs: dict[str, object] | None = None) -> None:
    """Record :func:`already_met_warning` for the slot's current stage in its episode's
    warnings (``obs``: the batch's observation when already read; else it is read)."""
    stage = ctx.stages[state.stage_index]
    if stage.is_text_only() or not stage.goals or stage.has_log_verification():
        return
    try:
        obs = ctx.sim.observe() if obs is None else obs
    except Exception:  # noqa: BLE001 - observing is the next verification's to report
        return
    warning = already_met_warning(stage, state.stage_index, slice_obs(obs, state.slot))
    if warning and warning not in state.record.warnings:
        state.record.warnings.append(warning)

