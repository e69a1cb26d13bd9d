"""Each name and behaviour an author brings from the predecessor (MAGMA 2.0), one by one.

The package test (``test_predecessor_package``) runs them together; these pin each item."""

from __future__ import annotations

import logging

import pytest
import torch

from magma_core.simulation.data_structures import (
    Log,
    StageInput,
    StatusInstruction,
    StatusReturn,
    TemplateInstruction,
    ToolErrorSupport,
    ToolExecution,
    ToolResult,
    UserInstruction,
)
from magma_core.simulation.goals import (
    At,
    AtLeastCountAt,
    BaseGoal,
    ExactCountAt,
    MaxAt,
    NotAt,
    On,
)
from magma_core.simulation.stage import (
    AskingBaseStage,
    BaseTaskStage,
    ConstraintBaseStage,
    ModifAttributesBaseStage,
    TextOnlyValidationMode,
)
from magma_core.simulation.tasks import (
    BaseTask,
    InitializationParameters,
    TaskMetadata,
    TaskStyle,
)
from magma_core.simulation.tools import BaseToolsAPI, register_tool


def _obs(**poses: list[list[float]]) -> dict:
    """``obs["extra"]`` with ``[N, 7]`` poses from lists of xyz rows."""
    extra = {}
    for name, rows in poses.items():
        t = torch.zeros(len(rows), 7)
        t[:, :3] = torch.tensor(rows)
        t[:, 3] = 1
        extra[name] = t
    return {"extra": extra}


# -- goals -----------------------------------------------------------------------------------
def test_counting_goals_and_on() -> None:
    obs = _obs(a=[[0, 0, 0.02], [1, 1, 0.02]], b=[[0.01, 0, 0.06], [0, 0, 0.02]],
               zone=[[0, 0, 0], [0, 0, 0]])
    assert AtLeastCountAt(["a", "b"], "zone", 2).verify(obs).tolist() == [1, 0]
    assert ExactCountAt(["a", "b"], "zone", 1).verify(obs).tolist() == [0, 1]
    assert MaxAt(["a", "b"], "zone", 1).verify(obs).tolist() == [-1, 1]
    assert MaxAt(["a", "b"], "zone", 1, strict=False).verify(obs).tolist() == [0, 1]
    assert On("b", "a").verify(obs).tolist() == [1, 0]  # aligned and above / far away
    assert On("a", "b").verify(obs).tolist() == [0, 0]  # aligned but below
    for goal in (AtLeastCountAt(["a"], "zone", 1), ExactCountAt(["a"], "zone", 0, thresh=0.2),
                 MaxAt(["a"], "zone", 0, strict=False), On("b", "a", thresh=0.1)):
        again = BaseGoal.from_spec(goal.to_spec())
        assert type(again) is type(goal) and again.to_spec() == goal.to_spec()
    with pytest.raises(ValueError):
        MaxAt(["a"], "zone", -1)
    with pytest.raises(TypeError):
        AtLeastCountAt("a", "zone", 1)


def test_goal_keywords_obj_name_and_location_are_accepted() -> None:
    ours, theirs = At("cube", "zone", thresh=0.05), At(obj_name="cube", location="zone", thresh=0.05)
    assert ours.to_spec() == theirs.to_spec()
    assert At.from_spec(theirs.to_spec()).obj == "cube"
    not_at = NotAt(obj_name="cube", locations=["zone", "bin"], strict=False)
    assert (not_at.obj, not_at.area, not_at.strict) == ("cube", ["zone", "bin"], False)
    assert NotAt.from_spec(not_at.to_spec()).area == ["zone", "bin"]
    with pytest.raises(TypeError):
        At("cube", "zone", obj_name="other")
    with pytest.raises(TypeError):
        At(location="zone")


# -- instructions, data structures ------------------------------------------------------------
def test_status_return_and_template_instruction() -> None:
    status = StatusReturn({"infos": "panda: pick succeed"}, timestamp=3)
    assert isinstance(status, StatusInstruction) and status.role == "SYSTEM"
    assert status.to_string() == "panda: pick succeed"
    assert StatusReturn.from_spec(status.to_spec()).timestamp == 3
    template = TemplateInstruction({"request": "sort", "objects": 3}, "warehouse")
    assert template.role == "USER" and template.get_content() == str(template.template)
    template.set_content("Sort the three cubes.")
    again = TemplateInstruction.from_spec(template.to_spec())
    assert again.get_content() == "Sort the three cubes."  # the filled content survives
    assert StageInput(again, False).linked_to_prev is False


def test_tool_error_support_is_importable_from_data_structures() -> None:
    from magma_core.simulation.errors import BaseError
    from magma_core.simulation.errors import ToolErrorSupport as FromErrors

    class Jam(BaseError):
        pass

    assert FromErrors is ToolErrorSupport
    assert ToolErrorSupport(Jam, post=False).pre
    with pytest.raises(TypeError):
        ToolErrorSupport(int)


# -- tasks -----------------------------------------------------------------------------------
def test_initialization_parameters_take_planner_and_reset_options() -> None:
    params = InitializationParameters({"num_cubes": 4}, {"robot": "panda_v2"}, ["default"])
    assert params.planner_options == {"robot": "panda_v2"}
    assert params.reset_options == {}
    assert InitializationParameters().planner_options["robot"] == "panda_v2"
    with pytest.raises(TypeError):
        InitializationParameters(planner_options=["fast"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        InitializationParameters(reset_options=1)  # type: ignore[arg-type]


def test_default_agent_names_resolve_to_the_world_names(caplog) -> None:
    params = InitializationParameters(agent_names=["default"])
    with caplog.at_level(logging.WARNING):
        assert params.resolve_agent_names(["panda-0", "panda-1"], "T") == ["panda-0", "panda-1"]
    assert "replaced by the world's robot names" in caplog.text
    assert InitializationParameters().resolve_agent_names(["panda"]) == ["panda"]
    assert InitializationParameters(agent_names=["arm"]).resolve_agent_names(["panda"]) == ["arm"]
    with pytest.raises(ValueError):
        InitializationParameters(agent_names=["a", "b"]).resolve_agent_names(["panda"])


def test_task_metadata_takes_the_predecessor_names() -> None:
    meta = TaskMetadata(styles=[TaskStyle.CONSTRAINED], approximal_difficulty="Hard",
                        coaching_hint="Mind the rule.")
    assert (meta.difficulty, meta.hint) == ("Hard", "Mind the rule.")
    assert (meta.approximal_difficulty, meta.coaching_hint) == ("Hard", "Mind the rule.")
    assert TaskMetadata(["x"], "Easy", "h") == TaskMetadata(["x"], approximal_difficulty="Easy",
                                                            coaching_hint="h")
    assert TaskStyle.INTERUPTION.value == "interuption"
    with pytest.raises(TypeError):
        TaskMetadata(difficulty="Easy", approximal_difficulty="Hard")


def test_randomized_config_path_is_kept() -> None:
    class Preset(BaseTask):
        randomized_config_path = "randomization/preset.yaml"

    assert Preset().randomized_config_path == "randomization/preset.yaml"
    assert BaseTask().randomized_config_path == ""
    assert BaseTask(randomized_config_path="r.yaml").randomized_config_path == "r.yaml"
    with pytest.raises(TypeError):
        BaseTask(randomized_config_path=3)


# -- tools -----------------------------------------------------------------------------------
class TheirTools(BaseToolsAPI):
    def __init__(self, agents, equivalence):
        super().__init__(agents, equivalence)
        self.agents, self.equivalence = agents, equivalence

    @register_tool(description="Which agent am I?")
    def whoami(self, obs, env_id, params):
        agent = self.get_agent(obs.selected_robot_name)
        return ToolExecution(["OK"], lambda raw: ToolResult(ok=True, reason=str(agent)))

    @register_tool(description="Always refused.")
    def refuse(self, obs, env_id, params):
        return self._return_failed_tool("no")


def test_a_tools_class_taking_agents_and_equivalence() -> None:
    tools = TheirTools()  # what the engine does, then it binds the robots
    tools.bind_robots({"panda-0": "A0", "panda-1": "A1"})
    assert tools.agents == ["A0", "A1"]
    assert tools.equivalence == {"panda-0": 0, "panda-1": 1}
    assert tools.get_agent("panda-1") == "A1" and tools.robot_names() == ["panda-0", "panda-1"]
    direct = TheirTools(["X"], {"panda": 0})  # the predecessor's own call still works
    assert direct.get_agent("panda") == "X"


def test_tools_class_taking_agents_runs_in_the_engine() -> None:
    from engine.fakes import FakeMotion, FakeSim
    from engine.helpers import act
    from engine.scenario import ENV_ID, SITUATION, PlaceCubeStage
    from magma_core.simulation.executor import Executor

    task = BaseTask(maniskill_env_id=ENV_ID, Tools_cls=TheirTools, situation_init=SITUATION,
                    stages=[PlaceCubeStage()])
    sim = FakeSim(2)
    with Executor(task, 2, sim=sim, motion=FakeMotion(sim)) as executor:
        out = executor.submit({0: act("whoami"), 1: act("refuse")})
        bound = executor._ctx.tools[1]  # one tools instance per slot, built by the engine
    assert out[0].calls[0].ok and out[0].calls[0].message.startswith("<object object")
    assert bound.equivalence == {"panda": 0} and len(bound.agents) == 1
    assert not out[1].calls[0].ok and out[1].calls[0].message == "no"


# -- stage templates -----------------------------------------------------------------------
def test_asking_and_constraint_stages() -> None:
    ask = AskingBaseStage("Where is the cube?", "The cube is in zone A.",
                          allow_tools_before_answer=True, allowed_tools=["detect"])
    assert ask.is_text_only() and (ask.target_tool_calls, ask.max_tool_calls) == (1, 1)
    assert ask.global_parameters.reset_at_end and "zone A" in ask.global_parameters.verification_prompt
    assert ask.global_parameters.text_only_validation is TextOnlyValidationMode.JUDGE
    rule = ConstraintBaseStage("Never touch the red cube.")
    instruction = rule.stage_input.instruction
    assert instruction.has_constraint and rule.is_text_only()
    for stage in (ask, rule):
        again = BaseTaskStage.from_spec(stage.to_spec())
        assert again.to_spec() == stage.to_spec()
    with pytest.raises(ValueError):
        AskingBaseStage("", "x")


def test_modify_attributes_stage_checks_the_last_log() -> None:
    stage = ModifAttributesBaseStage(
        "ADD", {"instruction": UserInstruction("Add zone_c."), "flag_answer_to_user": False},
        "zone_c", "areas",
    )
    assert stage.global_parameters.additive_stage and not stage.goals
    add, other = Log(("areas", "zone_c"), action="ADD"), Log(("areas", "zone_d"), action="ADD")
    assert stage.verif_log_completion([], []) == 0
    assert stage.verif_log_completion([other, add], []) == 1
    assert stage.verif_log_completion([add, other], []) == -1
    assert BaseTaskStage.from_spec(stage.to_spec()).to_spec() == stage.to_spec()
    with pytest.raises(ValueError):
        ModifAttributesBaseStage("EDIT", StageInput(UserInstruction("x"), False), "a", "b")
