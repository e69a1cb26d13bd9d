"""Goals, the action stage and the entry transitions of the kitchen scenario.

Goals read ``obs["extra"]`` through :mod:`magma_scenarios.kitchen.places`:

* ``InPlace(object, place)``: 1 where the object's place is ``place``;
* ``JointIs(target, state)``: 1 where the drawer or lid is ``open`` / ``closed``;
* ``KeptOut(objects, container)``: 1 while none of ``objects`` is in ``container``, -1
  (failed for good) as soon as one is.

A :class:`KitchenStage` bundles them: placements, joint states and keep-out rules, with a
budget of ``calls`` tool calls (the reference solution's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from magma_core.simulation.data_structures import EmptyInstruction, StageInput, UserInstruction
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import And, BaseGoal
from magma_core.simulation.stage import BaseTaskStage, StageErrorParameters
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_scenarios.kitchen import places as pl
from magma_scenarios.kitchen import world as w


def _slots(obs: dict) -> int:
    return int(obs["extra"]["joints"].shape[0])


class InPlace(BaseGoal):
    """1 where ``object`` is in ``place`` (the innermost container, or ``counter``)."""

    def __init__(self, object: str, place: str) -> None:  # noqa: A002 (the spec's name)
        if place not in w.PLACES:
            raise ValueError(f"unknown place {place!r}; places: {', '.join(w.PLACES)}")
        self.object = object
        self.place = place

    def verify(self, obs: dict) -> torch.Tensor:
        extra = obs["extra"]
        return torch.tensor([int(pl.place_of(extra, self.object, i) == self.place)
                             for i in range(_slots(obs))], dtype=torch.int64)


class JointIs(BaseGoal):
    """1 where ``target`` (a drawer or ``box``) is ``state`` (``open`` or ``closed``)."""

    def __init__(self, target: str, state: str) -> None:
        if target not in w.JOINTS or state not in ("open", "closed"):
            raise ValueError(f"JointIs needs a target in {w.JOINTS} and open/closed, "
                             f"got {target!r}, {state!r}")
        self.target = target
        self.state = state

    def verify(self, obs: dict) -> torch.Tensor:
        check = pl.is_open if self.state == "open" else pl.is_closed
        return torch.tensor([int(check(obs["extra"], self.target, i)) for i in range(_slots(obs))],
                            dtype=torch.int64)


class KeptOut(BaseGoal):
    """1 while none of ``objects`` is in ``container``; -1 once one is (a broken rule)."""

    def __init__(self, objects: Sequence[str], container: str) -> None:
        self.objects = list(objects)
        self.container = container

    def verify(self, obs: dict) -> torch.Tensor:
        extra = obs["extra"]
        out = []
        for i in range(_slots(obs)):
            broken = any(pl.place_of(extra, o, i) == self.container for o in self.objects)
            out.append(-1 if broken else 1)
        return torch.tensor(out, dtype=torch.int64)


class KitchenStage(BaseTaskStage):
    """An action stage: every object of ``placements`` in its place, every joint of
    ``joints`` open or closed, and no object of ``keep_out[container]`` in that container.
    Optimal within ``calls`` tool calls (at most twice that, and at least 2).
    ``instruction=None`` continues the previous request."""

    def __init__(
        self,
        instruction: str | None,
        calls: int,
        placements: Mapping[str, str] | None = None,
        joints: Mapping[str, str] | None = None,
        keep_out: Mapping[str, Sequence[str]] | None = None,
        flag_answer_to_user: bool = False,
        *,
        entry_transition: BaseStageEnvironmentTransition | None = None,
        errors: list[BaseError] | None = None,
    ) -> None:
        self.instruction_text = instruction
        self.calls = int(calls)
        self.placements = dict(placements or {})
        self.joints = dict(joints or {})
        self.keep_out = {k: list(v) for k, v in (keep_out or {}).items()}
        if not self.placements and not self.joints:
            raise ValueError("KitchenStage needs a placement or a joint state to reach")
        self.target_tool_calls = self.calls
        self.max_tool_calls = max(2, 2 * self.calls)
        goals: list[BaseGoal] = [InPlace(o, p) for o, p in self.placements.items()]
        goals += [JointIs(t, s) for t, s in self.joints.items()]
        goals += [KeptOut(objs, c) for c, objs in self.keep_out.items()]
        parts = [f"{o} in {p}" for o, p in self.placements.items()]
        parts += [f"{t} {s}" for t, s in self.joints.items()]
        errors = list(errors or [])
        super().__init__(
            goals=[And(goals)] if len(goals) > 1 else goals,
            stage_goal_description="; ".join(parts) + ".",
            stage_input=StageInput(
                EmptyInstruction() if instruction is None else UserInstruction(instruction),
                flag_answer_to_user,
            ),
            error_parameters=StageErrorParameters(errors, len(errors), len(errors)),
            entry_transition=entry_transition,
        )

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "instruction": self.instruction_text,
            "calls": self.calls,
            "placements": self.placements,
            "joints": self.joints,
            "keep_out": self.keep_out,
            "flag_answer_to_user": self.stage_input.flag_answer_to_user,
            "entry_transition": self.entry_transition,
            "errors": list(self.error_parameters.possible_errors),
        }


# -- entry transitions ----------------------------------------------------------------------
def _row(leaf: torch.Tensor, env_ids: torch.Tensor) -> torch.Tensor:
    return env_ids.to(leaf.device)


class CloseAtEntry(BaseStageEnvironmentTransition):
    """Before the stage someone closes ``target`` (a drawer, or the box's lid; ``latch``
    latches the lid too). What lies in a closed drawer goes in with its tray."""

    def __init__(self, target: str, latch: bool = False) -> None:
        if target not in w.JOINTS:
            raise ValueError(f"unknown target {target!r}; these close: {', '.join(w.JOINTS)}")
        self.target = target
        self.latch = bool(latch)

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        extra = env_state["magma_extra_state"]
        arts = env_state["articulations"]
        index = w.JOINTS.index(self.target)
        target = extra["joint_target"]
        for env in env_ids.tolist():
            art = arts[self.target]
            q = float(art[env, 13])
            art[env, 13] = 0.0
            art[env, 14] = 0.0
            target[env, index] = 0.0
            if self.target in w.DRAWERS and q > 0:
                self._slide_contents(env_state, env, q)
            if self.latch and self.target == w.BOX:
                extra["box_latched"][env] = True
        return env_state

    def _slide_contents(self, env_state: dict, env: int, q: float) -> None:
        """Push what the tray holds in by ``q`` along +x (the tray goes back in)."""
        actors = env_state["actors"]
        tray_x = w.TRAY_CLOSED_X - q
        y = w.DRAWER_Y[self.target]
        for row in actors.values():
            x0, y0, z0 = (float(v) for v in row[env, :3])
            inside = abs(x0 - tray_x) <= w.TRAY_INNER[0] + 0.01 and abs(y0 - y) <= w.TRAY_INNER[1]
            if inside and 0.005 < z0 < w.HOUSING_TOP[0]:
                row[env, 0] = x0 + q
                row[env, 7:13] = 0.0

    def _to_spec_arguments(self) -> dict:
        return {"target": self.target, "latch": self.latch}


class MoveToCounterAtEntry(BaseStageEnvironmentTransition):
    """Before the stage someone takes ``object`` out (of a visible container) and puts it on
    the counter spot ``spot`` (an index of ``COUNTER_SPOTS``)."""

    def __init__(self, object: str, spot: int) -> None:  # noqa: A002
        if not 0 <= int(spot) < len(w.COUNTER_SPOTS):
            raise ValueError(f"spot must be an index of the {len(w.COUNTER_SPOTS)} counter spots")
        self.object = object
        self.spot = int(spot)

    def apply(self, env_state: dict, env_ids: torch.Tensor) -> dict:
        row = env_state["actors"][self.object]
        x, y = w.COUNTER_SPOTS[self.spot]
        half = w.object_spec(self.object).half[2]
        for env in env_ids.tolist():
            row[env, :3] = torch.tensor([x, y, half], dtype=row.dtype)
            row[env, 3:7] = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=row.dtype)
            row[env, 7:13] = 0.0
        return env_state

    def _to_spec_arguments(self) -> dict:
        return {"object": self.object, "spot": self.spot}
