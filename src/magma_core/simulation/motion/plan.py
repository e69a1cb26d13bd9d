"""What the motion layer is asked to do and what it answers.

A :class:`MotionPlan` is one tool's trajectory for one robot in one slot; a
:class:`MotionResult` says whether it was executed or why the planner gave up.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from magma_core.simulation.data_structures import GRIPPER_TOKENS, Pose, ToolErrorFlag, ToolExecution

__all__ = ["MotionConfig", "MotionPlan", "MotionResult", "MotionRun"]


@dataclass(frozen=True)
class MotionConfig:
    """Tuning of the trajectory → action conversion (defaults measured on the Panda).

    Attributes:
        max_cartesian_step: metres the TCP target may move per control step.
        max_rotation_step: radians the TCP target may turn per control step.
        max_reach: metres from the robot's base beyond which a pose is refused at once (the
            Panda reaches about 0.86 m); it bounds the planning work of any pose.
        max_joint_step: radians any arm joint target may move per control step.
        reach_tolerance: a pose is reached when every arm joint is this close (rad).
        fail_tolerance: after ``settle_steps`` a pose still farther than this is a failure.
        settle_steps: control steps allowed after the target stops moving.
        gripper_steps: control steps an OPEN or CLOSE holds the arm still.
    """

    max_cartesian_step: float = 0.02
    max_reach: float = 1.0
    max_rotation_step: float = 0.12
    max_joint_step: float = 0.08
    reach_tolerance: float = 0.01
    fail_tolerance: float = 0.05
    settle_steps: int = 25
    gripper_steps: int = 6


@dataclass
class MotionPlan:
    """One trajectory for one robot in one slot.

    Attributes:
        slot: the env slot.
        poses: ``Pose`` targets of the TCP (world frame) and OPEN / CLOSE / OK tokens.
        robot: robot index or name (``SimBatch.robot_names``).
        execution_group: plans of the same slot and group run one after another in call
            order; other plans run concurrently. Plans for the same robot in the same slot
            are always sequential.
    """

    slot: int
    poses: Sequence[Pose | str]
    robot: int | str = 0
    execution_group: Hashable | None = None

    def __post_init__(self) -> None:
        checked: list[Pose | str] = []
        for entry in self.poses:
            if isinstance(entry, str):
                if entry not in GRIPPER_TOKENS:
                    raise ValueError(f"unknown trajectory token {entry!r}")
                checked.append(entry)
            else:
                checked.append(Pose.coerce(entry))
        self.poses = checked

    @classmethod
    def from_tool(cls, slot: int, tool: ToolExecution) -> MotionPlan:
        """The plan of a ``ToolExecution`` (its poses, ``robot_idx`` and execution group)."""
        return cls(slot, list(tool.poses), tool.robot_idx, tool.execution_group)


@dataclass
class MotionResult:
    """Outcome of one plan: executed (``ok``) or a planner error with its reason.

    ``steps`` counts the control steps the plan commanded; ``start_step`` / ``end_step`` are
    the batch's step counter when it started and finished (execution groups show here).
    """

    plan: MotionPlan
    ok: bool = True
    reason: str = ""
    steps: int = 0
    start_step: int = -1
    end_step: int = -1
    failure_flag: ToolErrorFlag = field(default=ToolErrorFlag.NONE)

    def fail(self, reason: str) -> None:
        self.ok = False
        self.reason = reason
        self.failure_flag = ToolErrorFlag.PLANNER_ERROR

    def apply_to(self, tool: ToolExecution) -> None:
        """Mark ``tool`` (a ``ToolExecution``) as a PLANNER_ERROR when this plan failed."""
        if not self.ok:
            tool.fail(self.reason, ToolErrorFlag.PLANNER_ERROR)


@dataclass
class MotionRun:
    """What one ``MotionRunner.run`` call did: one result per plan (in plan order) and the
    control steps it took (``step_physics`` calls) in all and per slot (the steps that
    slot's world advanced)."""

    results: list[MotionResult] = field(default_factory=list)
    steps: int = 0
    slot_steps: dict[int, int] = field(default_factory=dict)

    def failures(self) -> dict[int, str]:
        """Plan index -> the reason that plan failed, for every plan that did."""
        return {i: r.reason for i, r in enumerate(self.results) if not r.ok}
