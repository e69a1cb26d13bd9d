"""Stages: budgets, a completion answer, an additive stage and a text-only question.

Runs on the built-in cube world ``MagmaCube-v1`` (its ``machine_on`` flag); no tool moves
the arm, so it runs in seconds. Run: python examples/stages/stage_flow.py
"""

from __future__ import annotations

import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1 with ManiSkill)
from magma_core.judge import Verdict
from magma_core.simulation.data_structures import (
    Decision,
    EnvStateUpdate,
    Log,
    SituationInit,
    StageInput,
    StageState,
    StageSuccess,
    ToolCall,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.executor import Executor
from magma_core.simulation.goals import BaseGoal
from magma_core.simulation.stage import BaseTaskStage, StageGlobalParameters
from magma_core.simulation.tasks import BaseTask
from magma_core.simulation.tools import BaseToolsAPI, register_tool


class MachineTools(BaseToolsAPI):
    @register_tool(
        description="Switch the machine on or off.",
        params_spec={"on": {"description": "true for on, false for off", "type": bool}},
    )
    def switch_machine(self, obs, env_id, params):
        result = ToolResult(
            ok=True,
            reason="Done.",
            state_updates=[
                EnvStateUpdate(path=("magma_extra_state", "machine_on"), value=params["on"])
            ],
        )
        return ToolExecution(["OK"], lambda raw_obs: result)

    # --8<-- [start:add_area]
    @register_tool(
        description="Add an area to the known areas.",
        params_spec={"area": {"description": "name of the area", "type": str}},
    )
    def add_area(self, obs, env_id, params):
        result = ToolResult(ok=True, reason=f"{params['area']} added.",
                            logs=Log(("areas", params["area"]), action="ADD"))
        return ToolExecution(["OK"], lambda raw_obs: result)
    # --8<-- [end:add_area]


class MachineIsOn(BaseGoal):
    def verify(self, obs):
        return obs["extra"]["machine_on"].reshape(-1).long()


# --8<-- [start:stages]
class SwitchOn(BaseTaskStage):
    target_tool_calls = 1  # OPTIMAL with 1 call
    max_tool_calls = 3  # ACCEPTABLE with 2 or 3; unfinished at 3: EXCEEDED

    def __init__(self):
        super().__init__(
            goals=[MachineIsOn()],
            stage_goal_description="The machine is on.",
            # True: the agent must then tell the user it is done (a completion answer)
            stage_input=StageInput(UserInstruction("Switch the machine on."), True),
        )

    def _to_spec_arguments(self):
        return {}


class AddZoneC(BaseTaskStage):
    """Additive: the agent may edit its known areas, and must add zone_c."""

    target_tool_calls = 1
    max_tool_calls = None  # becomes 2 x target

    def __init__(self):
        super().__init__(
            goals=[],  # no world goal: the log check decides
            stage_goal_description="zone_c is a known area.",
            stage_input=StageInput(UserInstruction("From now on, zone_c is an area too."), False),
            global_parameters=StageGlobalParameters(additive_stage=True),
        )

    def verif_log_completion(self, stage_log, full_log):
        added = any(log.action == "ADD" and log.content == ("areas", "zone_c") for log in stage_log)
        return 1 if added else 0

    def _to_spec_arguments(self):
        return {}


class HowManyAreas(BaseTaskStage):
    """Text-only: answered with a message, validated by a judge against the prompt."""

    target_tool_calls = 0
    max_tool_calls = 0

    def __init__(self):
        super().__init__(
            goals=[],
            stage_goal_description="The agent says how many areas it knows.",
            stage_input=StageInput(UserInstruction("How many areas do you know?"), False),
            global_parameters=StageGlobalParameters(
                verification_prompt="The answer says there are three areas."
            ),
        )

    def _to_spec_arguments(self):
        return {}
# --8<-- [end:stages]


class Workshop(BaseTask):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = MachineTools
    situation_init = SituationInit({"objects": ["cube"], "areas": ["zone_a", "zone_b"]})
    stages = [SwitchOn(), AddZoneC(), HowManyAreas()]


# --8<-- [start:judge]
class KeywordJudge:
    """A judge without a model: accepts answers that contain "three" (or "3")."""

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        ok = "three" in answer.lower() or "3" in answer
        return Verdict(ok, "names three areas" if ok else "does not say three")
# --8<-- [end:judge]


def main() -> None:
    # --8<-- [start:budgets]
    stage = SwitchOn()
    print([stage.get_stage_state(calls, StageSuccess.FINISH).name for calls in (1, 2, 3)])
    print(stage.get_stage_state(3, StageSuccess.ONGOING).name)
    assert stage.get_stage_state(1, StageSuccess.FINISH) is StageState.OPTIMAL
    assert stage.get_stage_state(3, StageSuccess.ONGOING) is StageState.EXCEEDED
    assert AddZoneC().max_tool_calls == 2
    try:
        type("Broken", (SwitchOn,), {"target_tool_calls": 4})()  # target above the maximum
    except ValueError as exc:
        print("refused:", exc)
    # --8<-- [end:budgets]

    # --8<-- [start:run]
    decisions = [
        Decision(tool_calls=[ToolCall("switch_machine", {"on": True}, "panda")]),
        Decision(say="The machine is on."),  # the completion answer
        Decision(tool_calls=[ToolCall("add_area", {"area": "zone_c"}, "panda")]),
        Decision(say="I know three areas: zone_a, zone_b and zone_c."),
    ]
    with Executor(Workshop(), num_slots=1, seed=0, judge=KeywordJudge()) as executor:
        print([type(s).__name__ for s in executor.stages])  # the completion stage was added
        for decision in decisions:
            view = executor.agent_view(0)
            outcome = executor.submit({0: decision})[0]
            print(f"stage {outcome.stage_index} [{view.kind}: {view.instruction[:36]}]",
                  outcome.stage_success.name, outcome.stage_state.name)
        print("attributes:", executor.agent_view(0).attributes["areas"], "| status:", outcome.status)
        assert outcome.status == "success"
        assert executor.agent_view(0).attributes["areas"] == ["zone_a", "zone_b", "zone_c"]
    # --8<-- [end:run]


if __name__ == "__main__":
    main()
