"""A cube scenario written the way the seeds describe, for the engine tests.

Tools read poses from ``obs.maniskill_obs["extra"]`` (the cube world's layout, which the
in-memory stand-in imitates), stages use the contract's goals, and ``MoveCubeAtEntry`` is
the seed's transition verbatim.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.scenario_events import (  # noqa: F401  (re-exported for the tests)
    BrokenTransition,
    GripperJam,
    MoveCubeAtEntry,
    MoveCubeReturningCopy,
    NamedError,
    SlipAfterPick,
)
from magma_core.simulation.data_structures import (
    EmptyInstruction,
    EnvStateUpdate,
    Log,
    Observation,
    Pose,
    SituationInit,
    StageInput,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.errors import BaseError
from magma_core.simulation.goals import At, BaseGoal
from magma_core.simulation.goals.base import SCORE_DTYPE
from magma_core.simulation.stage import (
    BaseTaskStage,
    StageErrorParameters,
    StageGlobalParameters,
    TextOnlyValidationMode,
)
from magma_core.simulation.stage.environment_transition import BaseStageEnvironmentTransition
from magma_core.simulation.tasks import (
    BaseTask,
    InitializationParameters,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from magma_core.simulation.tools import BaseToolsAPI, register_tool

ENV_ID = "MagmaCube-v1"
DOWN = (0.0, 1.0, 0.0, 0.0)  # TCP pointing down (wxyz)
HOVER_Z = 0.15
UNREACHABLE = 2.0  # an x no arm of the cube world reaches


# -- tools -------------------------------------------------------------------------------------
def _xyz(obs: Observation, env_id: int, name: str) -> tuple[float, float, float]:
    extra = obs.maniskill_obs["extra"]
    if name not in extra:
        raise KeyError(name)
    x, y, z = (float(v) for v in extra[name][env_id, :3])
    return x, y, z


def _nearest_object(raw: dict, env_id: int, objects: list[str]) -> str | None:
    extra = raw["extra"]
    tcp = extra["tcp"][env_id, :3]
    best, best_d = None, 0.06
    for name in objects:
        d = float(torch.linalg.vector_norm(extra[name][env_id, :3] - tcp))
        if d < best_d:
            best, best_d = name, d
    return best


class CubeTools(BaseToolsAPI):
    """Pick, place, push, switch the machine, detect; plus tools that misbehave on purpose."""

    @register_tool(
        description="Pick up an object.",
        params_spec={"object": {"description": "object name", "type": str}},
        errors=[GripperJam, SlipAfterPick],
        execution_group="gripper",
    )
    def pick(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        name = params["object"]
        if name not in obs.task_attributes.get("objects", []):
            execution = ToolExecution([], None)
            execution.fail(f"{name} is not a known object.")
            return execution
        x, y, z = _xyz(obs, env_id, name)
        poses = [
            Pose((x, y, z + 0.1), DOWN),
            "OPEN",
            Pose((x, y, z), DOWN),
            "CLOSE",
            Pose((x, y, HOVER_Z), DOWN),
        ]

        def verifier(raw: dict) -> ToolResult:
            lifted = float(raw["extra"][name][env_id, 2]) > 0.06
            return ToolResult(
                ok=lifted,
                reason=f"{name} picked." if lifted else f"{name} was not grasped.",
                logs=Log(f"picked {name}"),
            )

        return ToolExecution(poses, verifier, allowed_moving_actors=[name])

    @register_tool(
        description="Place the held object on an area.",
        params_spec={"area": {"description": "area name", "type": str}},
    )
    def place(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        area = params["area"]
        if area not in obs.task_attributes.get("areas", []):
            execution = ToolExecution([], None, reason_is_public=True)
            execution.fail(f"{area} is not a known area.")
            return execution
        x, y, _ = _xyz(obs, env_id, area)
        poses = [Pose((x, y, HOVER_Z), DOWN), Pose((x, y, 0.045), DOWN), "OPEN", Pose((x, y, HOVER_Z), DOWN)]
        objects = list(obs.task_attributes.get("objects", []))
        held_before = _nearest_object(obs.maniskill_obs, env_id, objects)

        def verifier(raw: dict) -> ToolResult:
            extra = raw["extra"]
            for name in objects:
                d = float(torch.linalg.vector_norm(extra[name][env_id, :2] - extra[area][env_id, :2]))
                if d < 0.06 and float(extra[name][env_id, 2]) < 0.05:
                    return ToolResult(True, f"{name} placed on {area}.", logs=Log(f"placed {name} on {area}"))
            return ToolResult(False, "Nothing was held." if held_before is None else f"Nothing landed on {area}.")

        return ToolExecution(poses, verifier)  # allowed_moving_actors=None: no protection

    @register_tool(
        description="Push an object along x by dx metres with the closed gripper.",
        params_spec={
            "object": {"description": "object name", "type": str},
            "dx": {"description": "distance (m)", "type": float},
            "allowed": {"description": "let the object move", "type": bool},
        },
        optional=["allowed"],
    )
    def push(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        name = params["object"]
        x, y, _ = _xyz(obs, env_id, name)
        start = x - 0.06
        poses = [
            "CLOSE",
            Pose((start, y, 0.1), DOWN),
            Pose((start, y, 0.025), DOWN),
            Pose((start + params["dx"], y, 0.025), DOWN),
            Pose((start + params["dx"], y, 0.1), DOWN),
        ]
        allowed = [name] if params.get("allowed", True) else []
        return ToolExecution(poses, lambda raw: ToolResult(True, "Pushed."), allowed_moving_actors=allowed)

    @register_tool(
        description="Look closely at an object (touches it, but must not move it).",
        params_spec={"object": {"description": "object name", "type": str}},
        is_detection=True,
    )
    def poke(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        name = params["object"]
        x, y, _ = _xyz(obs, env_id, name)
        poses = [
            "CLOSE",
            Pose((x - 0.06, y, 0.1), DOWN),
            Pose((x - 0.06, y, 0.025), DOWN),
            Pose((x + 0.02, y, 0.025), DOWN),
            Pose((x + 0.02, y, 0.1), DOWN),
        ]
        return ToolExecution(poses, lambda raw: ToolResult(True, f"{name} looks fine."), allowed_moving_actors=None)

    @register_tool(
        description="Switch the machine on or off.",
        params_spec={"on": {"description": "True to switch on", "type": bool}},
    )
    def switch_machine(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        on = params["on"]

        def verifier(raw: dict) -> ToolResult:
            return ToolResult(
                ok=True,
                reason="Machine switched on." if on else "Machine switched off.",
                state_updates=[EnvStateUpdate(path=("magma_extra_state", "machine_on"), value=on)],
            )

        return ToolExecution(["OK"], verifier)

    @register_tool(description="List the visible objects.", is_detection=True)
    def detect(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        objects = list(obs.task_attributes.get("objects", []))
        return ToolExecution(["OK"], lambda raw: ToolResult(True, f"I see: {', '.join(objects)}."))

    @register_tool(
        description="Remember a new area.",
        params_spec={"area": {"description": "area name", "type": str}},
    )
    def note_area(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        area = params["area"]
        return ToolExecution(
            ["OK"],
            lambda raw: ToolResult(True, f"{area} noted.", logs=Log(("areas", area), action="ADD")),
        )

    @register_tool(description="Reach an unreachable point.")
    def reach_far(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return ToolExecution([Pose((UNREACHABLE, 0.0, 0.2), DOWN)], lambda raw: ToolResult(True, "Reached."))

    @register_tool(description="A tool whose code raises.")
    def explode(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        raise RuntimeError("the tool exploded")

    @register_tool(description="A tool whose verifier raises.")
    def bad_verifier(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        def verifier(raw: dict) -> ToolResult:
            raise ValueError("the verifier broke")

        return ToolExecution(["OK"], verifier)

    @register_tool(description="A tool returning an update to a path that does not exist.")
    def bad_update(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        return ToolExecution(
            ["OK"],
            lambda raw: ToolResult(True, "done", state_updates=[EnvStateUpdate(("magma_extra_state", "nope"), 1)]),
        )

    @register_tool(description="Refuse and fail the stage.")
    def forbidden(self, obs: Observation, env_id: int, params: dict) -> ToolExecution:
        execution = ToolExecution([], None)
        execution.fail("This is forbidden.", ToolErrorFlag.BAD_CALL, must_fail_stage=True)
        return execution


# -- goals and stages --------------------------------------------------------------------------
class MachineOn(BaseGoal):
    """1 where ``obs["extra"]["machine_on"]`` is true."""

    def verify(self, obs: dict[str, Any]) -> torch.Tensor:
        return obs["extra"]["machine_on"].reshape(-1).to(SCORE_DTYPE)


def _input(instruction: str | None, flag: bool = False, linked: bool | None = None) -> StageInput:
    return StageInput(UserInstruction(instruction) if instruction else EmptyInstruction(), flag, linked)


class PlaceCubeStage(BaseTaskStage):
    """The cube lies on ``area``."""

    target_tool_calls = 2
    max_tool_calls = 4

    def __init__(
        self,
        area: str = "zone_a",
        instruction: str | None = "Put the cube in zone A.",
        flag: bool = False,
        *,
        reset_at_end: bool = False,
        entry_transition: BaseStageEnvironmentTransition | None = None,
        errors: list[BaseError] | None = None,
        min_errors: int = 1,
        max_errors: int = 1,
        target: int | None = 2,
        maximum: int | None = 4,
    ) -> None:
        self.target_tool_calls, self.max_tool_calls = target, maximum
        self.area, self.instruction, self.flag = area, instruction, flag
        super().__init__(
            goals=[At("cube", area, thresh=0.05)],
            stage_goal_description=f"The cube is on {area}.",
            stage_input=_input(instruction, flag),
            global_parameters=StageGlobalParameters(reset_at_end=reset_at_end),
            error_parameters=StageErrorParameters(list(errors or []), min_errors, max_errors),
            entry_transition=entry_transition,
        )

    def _to_spec_arguments(self) -> dict:
        return {"area": self.area, "instruction": self.instruction, "flag": self.flag}


class MachineStage(BaseTaskStage):
    """The machine is on."""

    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, instruction: str | None = "Switch the machine on.", *, reset_at_end: bool = False, flag: bool = False) -> None:
        super().__init__(
            goals=[MachineOn()],
            stage_goal_description="The machine is on.",
            stage_input=_input(instruction, flag),
            global_parameters=StageGlobalParameters(reset_at_end=reset_at_end),
        )

    def _to_spec_arguments(self) -> dict:
        return {}


class BrokenGoal(BaseGoal):
    def verify(self, obs: dict[str, Any]) -> torch.Tensor:
        raise RuntimeError("the goal broke")


class BrokenGoalStage(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self) -> None:
        super().__init__([BrokenGoal()], "never", _input("Do anything."))


class AskStage(BaseTaskStage):
    """A text-only question validated by the judge (or SAY_ONLY)."""

    target_tool_calls = 0
    max_tool_calls = 2

    def __init__(
        self,
        question: str | None = "Which zone did you use?",
        *,
        mode: TextOnlyValidationMode = TextOnlyValidationMode.JUDGE,
        allow_tools: bool = False,
        allowed_tools: list[str] | None = None,
        linked: bool | None = None,
    ) -> None:
        super().__init__(
            goals=[],
            stage_goal_description="The answer names zone A.",
            stage_input=_input(question, False, linked),
            global_parameters=StageGlobalParameters(
                verification_prompt="The answer says the cube is in zone A.",
                allow_tools_before_answer=allow_tools,
                allowed_tools=list(allowed_tools or []),
                text_only_validation=mode,
            ),
        )


class NoteAreaStage(BaseTaskStage):
    """Additive stage: the last stage log adds ``zone_c`` to the areas."""

    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, additive: bool = True) -> None:
        super().__init__(
            goals=[],
            stage_goal_description="zone_c is a known area.",
            stage_input=_input("Add zone C to your known areas."),
            global_parameters=StageGlobalParameters(additive_stage=additive),
        )

    def verif_log_completion(self, stage_log: list[Log], full_log: list[Log]) -> int:
        if not stage_log:
            return 0
        last = stage_log[-1]
        return 1 if last.action == "ADD" and last.content == ("areas", "zone_c") else 0


# -- tasks -------------------------------------------------------------------------------------
SITUATION = SituationInit(
    attributes={"objects": ["cube"], "areas": ["zone_a", "zone_b"]},
    memory={"notes": []},
)


def make_task(stages: list[BaseTaskStage], name: str = "CubeTest", **fields: Any) -> BaseTask:
    """A cube task with these stages."""
    return BaseTask(
        maniskill_env_id=ENV_ID,
        Tools_cls=CubeTools,
        situation_init=SITUATION,
        stages=stages,
        name=name,
        **fields,
    )


class SeedTask(BaseTask):
    """The task the seeds describe: switch the machine on (explicit state update), put the
    cube in zone A (answer flag → completion stage), then the cube is moved at entry of the
    next stage (``MoveCubeAtEntry``) and must be put in zone B."""

    maniskill_env_id = ENV_ID
    Tools_cls = CubeTools
    situation_init = SITUATION
    initialization_parameters = InitializationParameters()

    def __init__(self) -> None:
        self.stages = [
            MachineStage(),
            PlaceCubeStage("zone_a", "Now put the cube in zone A.", flag=True),
            PlaceCubeStage(
                "zone_b",
                "Someone moved the cube. Put it in zone B.",
                entry_transition=MoveCubeAtEntry(x=0.1),
            ),
        ]
        super().__init__()

    def perfect_trace(self) -> PerfectTrace:
        pick = ToolCallEvent([_call("pick", object="cube")])
        return PerfectTrace(
            [
                UserEvent("Switch the machine on."),
                ToolCallEvent([_call("switch_machine", on=True)]),
                UserEvent("Now put the cube in zone A."),
                pick,
                ToolCallEvent([_call("place", area="zone_a")]),
                MessageEvent("The cube is in zone A."),
                UserEvent("Someone moved the cube. Put it in zone B."),
                pick,
                ToolCallEvent([_call("place", area="zone_b")]),
            ]
        )


def _call(name: str, **arguments: Any):
    from magma_core.simulation.data_structures import ToolCall

    return ToolCall(name, arguments)
