"""A motion tool from scratch: a trajectory of TCP poses and gripper tokens, then a verifier.

``carry(object, area)`` picks an object up from above and sets it down in an area, in one
call; it reads where things are from the raw observation and checks afterwards where the
object ended up. Runs on the built-in cube world ``MagmaCube-v1`` (a Panda, a 4 cm ``cube``,
``zone_a``, ``zone_b``). Run: python examples/tools/motion_tool.py
"""

from __future__ import annotations

import math

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1 with ManiSkill)
from magma_core.simulation.data_structures import (
    Decision,
    Pose,
    SituationInit,
    StageInput,
    ToolCall,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import At
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool

# --8<-- [start:tool]
DOWN = (0.0, 1.0, 0.0, 0.0)  # wxyz: the gripper points down, fingers closing along y
ABOVE = 0.12  # metres above the table while travelling


class CarryTools(BaseToolsAPI):
    @register_tool(
        description="Pick an object up and set it down in an area.",
        params_spec={
            "object": {"description": "the object to carry", "type": str, "values_from": "objects"},
            "area": {"description": "where to put it", "type": str, "values_from": "areas"},
        },
    )
    def carry(self, obs, env_id, params):
        name, area = params["object"], params["area"]
        for value, kind in ((name, "objects"), (area, "areas")):
            if value not in obs.task_attributes[kind]:  # refuse before any motion: BAD_CALL
                known = ", ".join(obs.task_attributes[kind])
                return ToolExecution([], None, reason=f"Unknown {kind[:-1]} {value!r}. Known: {known}.",
                                     reason_is_public=True)
        extra = obs.maniskill_obs["extra"]  # poses [N, 7]: xyz + wxyz quaternion, one row per slot
        x, y, z = extra[name][env_id, :3].tolist()
        ax, ay = extra[area][env_id, :2].tolist()
        poses = [
            "OPEN",
            Pose((x, y, z + ABOVE), DOWN),  # above the object
            Pose((x, y, z), DOWN),  # down around it
            "CLOSE",
            Pose((x, y, z + ABOVE), DOWN),  # lift
            Pose((ax, ay, z + ABOVE), DOWN),  # travel above the area
            Pose((ax, ay, z + 0.005), DOWN),  # down, just above the table
            "OPEN",
            Pose((ax, ay, z + ABOVE), DOWN),  # back up, out of the way
        ]

        def verify(raw_obs):  # runs after the motion, on the raw observation of the batch
            ox, oy = raw_obs["extra"][name][env_id, :2].tolist()
            cx, cy = raw_obs["extra"][area][env_id, :2].tolist()
            off = math.dist((ox, oy), (cx, cy))
            if off > 0.06:
                return ToolResult(ok=False, reason=f"The {name} ended {off * 100:.0f} cm from {area}.")
            return ToolResult(ok=True, reason=f"The {name} is in {area}.")

        return ToolExecution(poses, verify, allowed_moving_actors=[name])

    @register_tool(
        description="Raise the gripper to a height above the table.",
        params_spec={"height": {"description": "metres above the table", "type": float}},
    )
    def raise_gripper(self, obs, env_id, params):
        x, y, _ = obs.maniskill_obs["extra"]["tcp"][env_id, :3].tolist()
        target = Pose((x, y, params["height"]), DOWN)
        return ToolExecution([target], lambda raw_obs: ToolResult(ok=True, reason="Raised."),
                             allowed_moving_actors=[])
# --8<-- [end:tool]


class CubeToB(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 5

    def __init__(self):
        super().__init__(
            goals=[At("cube", "zone_b")],
            stage_goal_description="The cube is in zone_b.",
            stage_input=StageInput(UserInstruction("Put the cube in zone_b."), False),
        )

    def _to_spec_arguments(self):
        return {}


class Carry(BaseTask):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = CarryTools
    situation_init = SituationInit({"objects": ["cube"], "areas": ["zone_a", "zone_b"]})
    stages = [CubeToB()]


def call(name, **arguments):
    return Decision(tool_calls=[ToolCall(name, arguments, "panda")])


def main() -> None:
    # --8<-- [start:main]
    with Executor(Carry(), num_slots=1, seed=0) as executor:
        def step(decision):
            outcome = executor.submit({0: decision})[0]
            for c in outcome.calls:
                print(f"{c.tool}: ok={c.ok} {c.failure_flag.name} {c.message!r}")
            return outcome

        # A pose out of the arm's reach is refused before any motion (PLANNER_ERROR).
        high = step(call("raise_gripper", height=3.0))
        assert high.calls[0].failure_flag.name == "PLANNER_ERROR"
        step(call("raise_gripper", height=0.2))  # a reachable one moves the arm

        done = step(call("carry", object="cube", area="zone_b"))
        print("stage:", done.stage_success.name, done.stage_state.name, f"({done.tool_calls} calls)")
        assert done.calls[0].ok and done.status == "success"
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
