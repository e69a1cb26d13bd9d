"""Tools and results: registration, bad calls, refusals, injected errors, actor protection.

Runs on the built-in cube world ``MagmaCube-v1`` (a Panda, a ``cube``, ``zone_a``, ``zone_b``).
Run: python examples/tools/tool_calls.py
"""

from __future__ import annotations

import torch

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1 with ManiSkill)
from magma_core.simulation.data_structures import (
    Decision,
    EnvStateUpdate,
    SituationInit,
    StageInput,
    ToolCall,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import BaseGoal
from magma_core.simulation.stage import BaseTaskStage, StageErrorParameters
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool


# --8<-- [start:error]
class StuckSwitch(BaseError):
    """Injected error: the first switch of the stage does nothing."""

    def apply_pre_exec(self, tool_execution, args):
        if args.get("used"):
            return False  # only once per stage
        args["used"] = True
        tool_execution.fail("The switch is stuck.", failure_flag=ToolErrorFlag.INJECTION_ERROR)
        return True

    def get_description(self, args):
        return "The machine's switch may stick."
# --8<-- [end:error]


# --8<-- [start:tools]
class WorkshopTools(BaseToolsAPI):
    @register_tool(
        description="Switch the machine on or off.",
        params_spec={"on": {"description": "true for on, false for off", "type": bool}},
        errors=[StuckSwitch],  # this tool opts into StuckSwitch's hooks
    )
    def switch_machine(self, obs, env_id, params):
        result = ToolResult(
            ok=True,
            reason=f"Machine switched {'on' if params['on'] else 'off'}.",
            state_updates=[
                EnvStateUpdate(path=("magma_extra_state", "machine_on"), value=params["on"])
            ],
        )
        return ToolExecution(poses=["OK"], verifier=lambda raw_obs: result)

    @register_tool(
        description="Say where an object is.",
        params_spec={"object": {"description": "name of the object", "type": str}},
        is_detection=True,  # a detection tool moves nothing: allowed_moving_actors=[]
    )
    def locate(self, obs, env_id, params):
        name = params["object"]
        if name not in obs.task_attributes["objects"]:  # a domain check: refuse with a reason
            known = ", ".join(obs.task_attributes["objects"])
            return ToolExecution([], None, reason=f"Unknown object {name!r}. Known: {known}.",
                                 reason_is_public=True)

        def verify(raw_obs):
            x, y = raw_obs["extra"][name][env_id, :2].tolist()
            return ToolResult(ok=True, reason=f"The {name} is at x={x:.2f}, y={y:.2f}.",
                              context={"xy": (x, y)})

        return ToolExecution(["OK"], verify)

    @register_tool(
        description="Nudge the cube 5 cm along x (without the arm).",
        params_spec={"allowed": {"description": "whether the cube may move", "type": bool}},
    )
    def nudge(self, obs, env_id, params):
        def verify(raw_obs):
            pose = raw_obs["extra"]["cube"][env_id].clone()  # xyz + quaternion, [7]
            pose[0] += 0.05
            row = torch.cat([pose, torch.zeros(6)])  # an actor-state row: pose, velocities
            update = EnvStateUpdate(("actors", "cube"), row)
            return ToolResult(ok=True, reason="Nudged.", state_updates=[update])

        allowed = ["cube"] if params["allowed"] else []  # actors this call may move
        return ToolExecution(["OK"], verify, allowed_moving_actors=allowed)
# --8<-- [end:tools]


class MachineIsOn(BaseGoal):
    def verify(self, obs):
        return obs["extra"]["machine_on"].reshape(-1).long()


# --8<-- [start:stage]
class SwitchOn(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 5

    def __init__(self):
        super().__init__(
            goals=[MachineIsOn()],
            stage_goal_description="The machine is on.",
            stage_input=StageInput(UserInstruction("Switch the machine on."), False),
            error_parameters=StageErrorParameters(possible_errors=[StuckSwitch()]),
        )

    def _to_spec_arguments(self):
        return {}
# --8<-- [end:stage]


class Workshop(BaseTask):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = WorkshopTools
    situation_init = SituationInit({"objects": ["cube"], "areas": ["zone_a", "zone_b"]})
    stages = [SwitchOn()]


def call(name, **arguments):
    return Decision(tool_calls=[ToolCall(name, arguments, "panda")])


def main() -> None:
    # --8<-- [start:main]
    print([tool["name"] for tool in WorkshopTools.get_api_description()])  # what the agent sees

    with Executor(Workshop(), num_slots=1, seed=0) as executor:
        def step(decision):
            outcome = executor.submit({0: decision})[0]
            for c in outcome.calls:
                print(f"{c.tool}: ok={c.ok} {c.failure_flag.name} {c.message!r}"
                      f"{' (forgiven)' if c.forgiven else ''}")
            return outcome

        # A bad call never reaches the tool method: BAD_CALL, and it counts against the budget.
        bad = step(call("switch_machine", on="yes"))
        assert bad.calls[0].failure_flag is ToolErrorFlag.BAD_CALL and bad.tool_calls == 1

        # The tool refuses an unknown object itself, with a reason the agent can act on.
        assert not step(call("locate", object="banana")).calls[0].ok

        # Actor protection: the same state update, once not allowed (undone), once allowed.
        def cube_x():
            return executor.sim.get_state()["actors"]["cube"][0, 0].item()

        x0 = cube_x()
        step(call("nudge", allowed=False))
        assert abs(cube_x() - x0) < 1e-6
        step(call("nudge", allowed=True))
        assert abs(cube_x() - (x0 + 0.05)) < 1e-3

        # The injected error fails the first switch; that failure is forgiven.
        stuck = step(call("switch_machine", on=True))
        assert stuck.calls[0].failure_flag is ToolErrorFlag.INJECTION_ERROR
        assert stuck.calls[0].forgiven
        done = step(call("switch_machine", on=True))
        print("stage:", done.stage_success.name, done.stage_state.name,
              f"({done.tool_calls} calls, {done.forgiven_tool_calls} forgiven)")
        assert done.status == "success" and done.forgiven_tool_calls == 1
    # --8<-- [end:main]


if __name__ == "__main__":
    main()
