"""Layer 4: a tool's trajectory (poses + OPEN / CLOSE / OK) becomes controller actions.

``run_trajectories(sim_batch, plans)`` (or a ``MotionRunner``) executes a batch of
``MotionPlan``s, one per tool call (slot, robot, poses, execution group), all slots
stepping together, and answers one ``MotionResult`` per plan (``ok`` or ``PLANNER_ERROR``
with its reason; ``MotionRunner.run`` also counts the control steps). See ``runner`` for how a pose becomes joint targets.

Why ``pd_joint_pos`` with IK solved ahead (not the ``pd_ee_pose`` controller): on the
cube world's scripted pick-and-place (10 seeds, same waypoints, same interpolation limits)
both succeeded 10/10, but IK ahead + ``pd_joint_pos`` ran ~0.07 s per episode against
~0.2 s for ``pd_ee_pose`` (which solves IK inside every control step): about 950-1170 vs
290-410 control steps/s on a 2-core CPU machine.
"""

from magma_core.simulation.motion.kinematics import ArmKinematics
from magma_core.simulation.motion.plan import MotionConfig, MotionPlan, MotionResult, MotionRun
from magma_core.simulation.motion.runner import CONTROL_MODE, MotionRunner, run_trajectories

__all__ = [
    "CONTROL_MODE",
    "ArmKinematics",
    "MotionConfig",
    "MotionPlan",
    "MotionResult",
    "MotionRun",
    "MotionRunner",
    "run_trajectories",
]
