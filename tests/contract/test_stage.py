"""Stages: budgets, budget scores, validation, verification, parameters and serialisation."""

from __future__ import annotations

import json

import pytest
import torch

from contract.scenario_examples import (
    FailGrasp,
    GenericStage,
    LogStage,
    MoveCubeAtEntry,
    Noop,
    PlaceCubeStage,
    make_obs,
)
from magma_core.simulation.data_structures import (
    EmptyInstruction,
    Log,
    StageInput,
    StageState,
    StageSuccess,
    UserInstruction,
)
from magma_core.simulation.goals import At, BaseGoal, NotAt
from magma_core.simulation.stage import (
    BaseStageComposite,
    BaseTaskStage,
    CompletionAnswerStage,
    StageErrorParameters,
    StageGlobalParameters,
    TextOnlyValidationMode,
)

TEXT = "The agent answers politely."


def text_stage(**changes) -> GenericStage:
    params = {"verification_prompt": TEXT, **changes}
    return GenericStage(goals=[], global_parameters=StageGlobalParameters(**params))


# -- budgets -----------------------------------------------------------------------------------
def test_budgets_from_class_attributes() -> None:
    stage = PlaceCubeStage("Put the cube on the goal.")
    assert (stage.target_tool_calls, stage.max_tool_calls) == (2, 5)


def test_max_defaults_to_twice_the_target() -> None:
    assert GenericStage(3, None).max_tool_calls == 6
    assert GenericStage(0, None).max_tool_calls == 0


def test_unknown_target_is_allowed() -> None:
    assert GenericStage(None, 4).target_tool_calls is None


@pytest.mark.parametrize(("target", "maximum"), [(None, None), (-1, 3), (2, -1), (3, 2)])
def test_invalid_budgets(target: int | None, maximum: int | None) -> None:
    with pytest.raises(ValueError):
        GenericStage(target, maximum)


@pytest.mark.parametrize(("target", "maximum"), [(1.5, 3), (True, 3), (1, "3")])
def test_budgets_must_be_ints(target: object, maximum: object) -> None:
    with pytest.raises(TypeError):
        GenericStage(target, maximum)  # type: ignore[arg-type]


def test_missing_budget_attributes_name_the_class() -> None:
    class NoBudgets(BaseTaskStage):
        def __init__(self) -> None:
            super().__init__([At("cube", "goal")], "", StageInput(UserInstruction("a"), False))

    with pytest.raises(TypeError, match="NoBudgets.*target_tool_calls and max_tool_calls"):
        NoBudgets()

    class OnlyTarget(NoBudgets):
        target_tool_calls = 1

    with pytest.raises(TypeError, match="OnlyTarget.*max_tool_calls"):
        OnlyTarget()


STATE_TABLE = [
    # target, max, effective, success, expected
    (2, 4, 0, StageSuccess.FINISH, StageState.OPTIMAL),
    (2, 4, 2, StageSuccess.FINISH, StageState.OPTIMAL),
    (2, 4, 3, StageSuccess.FINISH, StageState.ACCEPTABLE),
    (2, 4, 9, StageSuccess.FINISH, StageState.ACCEPTABLE),
    (None, 4, 1, StageSuccess.FINISH, StageState.UNASSESSED),
    (None, 4, 9, StageSuccess.FINISH, StageState.UNASSESSED),
    (2, 4, 4, StageSuccess.ONGOING, StageState.EXCEEDED),
    (2, 4, 5, StageSuccess.FAILED, StageState.EXCEEDED),
    (None, 4, 4, StageSuccess.ONGOING, StageState.EXCEEDED),
    (2, 4, 3, StageSuccess.ONGOING, StageState.ACCEPTABLE),
    (2, 4, 1, StageSuccess.FAILED, StageState.OPTIMAL),
    (None, 4, 3, StageSuccess.ONGOING, StageState.UNASSESSED),
]


@pytest.mark.parametrize(("target", "maximum", "effective", "success", "expected"), STATE_TABLE)
def test_get_stage_state(target, maximum, effective, success, expected) -> None:
    stage = GenericStage(target, maximum)
    assert stage.get_stage_state(effective, success) is expected
    assert stage.get_stage_state(effective, int(success)) is expected


# -- validation --------------------------------------------------------------------------------
def test_valid_stages_pass() -> None:
    PlaceCubeStage("go").validate()
    LogStage(goals=[]).validate()
    text_stage().validate()
    text_stage(allow_tools_before_answer=True, allowed_tools=["look"]).validate()
    text_stage(text_only_validation=TextOnlyValidationMode.SAY_ONLY).validate()
    CompletionAnswerStage(["look"]).validate()


class TextWithLogCheck(GenericStage):
    def verif_log_completion(self, stage_log: list[Log], full_log: list[Log]) -> int:
        return 1


@pytest.mark.parametrize(
    ("build", "rule"),
    [
        (lambda: GenericStage(global_parameters=StageGlobalParameters(
            text_only_validation=TextOnlyValidationMode.SAY_ONLY)), "verification_prompt"),
        (lambda: GenericStage(global_parameters=StageGlobalParameters(
            allow_tools_before_answer=True)), "allow_tools_before_answer"),
        (lambda: text_stage(allowed_tools=["look"]), "allowed_tools"),
        (lambda: GenericStage(global_parameters=StageGlobalParameters(
            verification_prompt=TEXT)), "no goals"),
        (lambda: TextWithLogCheck(goals=[], global_parameters=StageGlobalParameters(
            verification_prompt=TEXT)), "verif_log_completion"),
        (lambda: GenericStage(goals=[]), "without goals"),
        (lambda: GenericStage(error_parameters=StageErrorParameters(
            [FailGrasp(), FailGrasp("other")])), "unique"),
        (lambda: GenericStage(error_parameters=StageErrorParameters([Noop()], -1, 1)), "ints >= 0"),
        (lambda: GenericStage(error_parameters=StageErrorParameters([Noop()], 1, True)), "ints >= 0"),
        (lambda: GenericStage(error_parameters=StageErrorParameters([Noop()], 1.0, 1)), "ints >= 0"),
        (lambda: GenericStage(error_parameters=StageErrorParameters([Noop()], 2, 1)), "exceeds"),
    ],
)
def test_validate_rules(build, rule: str) -> None:
    stage = build()
    with pytest.raises(TypeError, match=rule) as info:
        stage.validate()
    assert type(stage).__name__ in str(info.value)


def test_validate_checks_the_mode_type() -> None:
    stage = text_stage()
    stage.global_parameters.text_only_validation = "judge"  # type: ignore[assignment]
    with pytest.raises(TypeError, match="TextOnlyValidationMode"):
        stage.validate()


# -- verification ------------------------------------------------------------------------------
OBS = make_obs(
    cube=[(0.0, 0.0), (0.5, 0.5), (0.0, 0.0)],
    goal=[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)],
    bin=[(1.0, 1.0), (0.5, 0.5), (0.0, 0.0)],
)


def test_env_completion_is_the_minimum_of_the_goals() -> None:
    stage = GenericStage(goals=[At("cube", "goal"), NotAt("cube", "bin")])
    assert stage.verif_env_completion(OBS).tolist() == [1, -1, -1]


def test_env_completion_without_goals_is_ones_of_the_batch() -> None:
    stage = LogStage(goals=[])
    assert stage.verif_env_completion(OBS).tolist() == [1, 1, 1]
    assert stage.verif_env_completion({"extra": {"x": {"pose": torch.zeros(2, 7)}}}).tolist() == [1, 1]
    with pytest.raises(ValueError):
        stage.verif_env_completion({"extra": {}})


def test_default_log_completion_and_combination() -> None:
    assert GenericStage().verif_log_completion([], []) == 1
    combine = BaseTaskStage.combine_stage_completion
    table = {(1, 1): 1, (1, 0): 0, (0, 1): 0, (0, 0): 0, (-1, 1): -1, (1, -1): -1, (0, -1): -1,
             (-1, 0): -1, (-1, -1): -1}
    for (env, log), expected in table.items():
        assert combine(env, log) == expected


def test_verify_completion_combines_goals_and_logs() -> None:
    stage = LogStage(goals=[At("cube", "goal")])
    stage_logs = [[Log("done")], [Log("done")], [Log("broken")]]
    full_logs = [[Log("x"), *logs] for logs in stage_logs]
    assert stage.verify_completion(OBS, stage_logs, full_logs).tolist() == [1, 0, -1]
    assert stage.verify_completion(OBS, [[], [], []], [[], [], []]).tolist() == [0, 0, 0]


def test_verify_completion_passes_each_env_its_own_logs() -> None:
    seen = []

    class Recording(GenericStage):
        def verif_log_completion(self, stage_log, full_log) -> int:
            seen.append((stage_log, full_log))
            return 1

    stage_logs, full_logs = [[Log("a")], [Log("b")]], [[Log("0"), Log("a")], [Log("b")]]
    Recording(goals=[]).verify_completion(make_obs(c=[(0, 0), (0, 0)]), stage_logs, full_logs)
    assert seen == list(zip(stage_logs, full_logs, strict=True))


def test_attribute_edits_fail_a_non_additive_stage() -> None:
    obs = make_obs(cube=[(0, 0), (0, 0)], goal=[(0, 0), (0, 0)])
    edit = Log(("colors", "red"), action="ADD")
    logs = [[Log("note")], [edit]]
    assert GenericStage().verify_completion(obs, logs, logs).tolist() == [1, -1]
    additive = GenericStage(global_parameters=StageGlobalParameters(additive_stage=True))
    assert additive.verify_completion(obs, logs, logs).tolist() == [1, 1]


def test_verify_completion_checks_shapes_and_scores() -> None:
    obs = make_obs(cube=[(0, 0), (0, 0)], goal=[(0, 0), (0, 0)])
    with pytest.raises(ValueError):
        GenericStage().verify_completion(obs, [[]], [[]])  # 2 envs in obs, 1 log list
    with pytest.raises(ValueError):
        GenericStage().verify_completion(obs, [[], []], [[]])

    class BadLog(GenericStage):
        def verif_log_completion(self, stage_log, full_log) -> int:
            return 2

    with pytest.raises(ValueError):
        BadLog().verify_completion(obs, [[], []], [[], []])


# -- parameters and declarations -----------------------------------------------------------------
def test_parameter_defaults() -> None:
    gp = StageGlobalParameters()
    assert (gp.reset_at_end, gp.additive_stage, gp.verification_prompt) == (False, False, None)
    assert (gp.allow_tools_before_answer, gp.allowed_tools) == (False, [])
    assert gp.text_only_validation is TextOnlyValidationMode.JUDGE
    assert StageGlobalParameters().allowed_tools is not gp.allowed_tools
    ep = StageErrorParameters()
    assert (ep.possible_errors, ep.min_active_errors, ep.max_active_errors) == ([], 1, 1)
    assert TextOnlyValidationMode("say_only") is TextOnlyValidationMode.SAY_ONLY


def test_stage_defaults_and_no_shared_parameters() -> None:
    stage = GenericStage()
    assert stage.global_parameters == StageGlobalParameters()
    assert stage.error_parameters == StageErrorParameters()
    assert stage.entry_transition is None and stage.request_type is None
    shared = StageGlobalParameters(allowed_tools=[])
    a, b = GenericStage(global_parameters=shared), GenericStage(global_parameters=shared)
    a.global_parameters.allowed_tools.append("x")
    assert b.global_parameters.allowed_tools == [] and shared.allowed_tools == []


def test_class_level_parameters_are_used() -> None:
    class ResettingStage(GenericStage):
        global_parameters = StageGlobalParameters(reset_at_end=True)

    assert ResettingStage().global_parameters.reset_at_end is True
    given = StageGlobalParameters(additive_stage=True)
    assert ResettingStage(global_parameters=given).global_parameters.reset_at_end is False


def test_constructor_type_checks() -> None:
    with pytest.raises(TypeError):
        GenericStage(goals=["not a goal"])
    with pytest.raises(TypeError):
        GenericStage(entry_transition=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        GenericStage(global_parameters={"reset_at_end": True})  # type: ignore[arg-type]


def test_request_type_is_set_once() -> None:
    stage = GenericStage()
    stage.request_type = " pick "
    assert stage.request_type == "pick"
    stage.request_type = "pick"
    with pytest.raises(RuntimeError):
        stage.request_type = "place"
    for bad in ("", "  ", None):
        with pytest.raises(ValueError):
            GenericStage().request_type = bad  # type: ignore[assignment]


def test_build_init_state() -> None:
    state = {"actors": {"cube": torch.zeros(2, 13)}}
    assert GenericStage().build_init_state(state, torch.tensor([0])) is state
    moved = PlaceCubeStage("go", x=0.3).build_init_state(state, torch.tensor([1]))
    assert moved["actors"]["cube"][:, 0].tolist() == pytest.approx([0.0, 0.3])


def test_build_init_state_needs_a_returned_state() -> None:
    class Forgetful(MoveCubeAtEntry):
        def apply(self, env_state, env_ids):
            super().apply(env_state, env_ids)

    stage = GenericStage(entry_transition=Forgetful(0.2))
    with pytest.raises(TypeError, match="return"):
        stage.build_init_state({"actors": {"cube": torch.zeros(1, 13)}}, torch.tensor([0]))


# -- serialisation -----------------------------------------------------------------------------
def test_stage_round_trip() -> None:
    stage = PlaceCubeStage("Put the cube on the goal.", x=0.25, reset_at_end=True)
    spec = json.loads(json.dumps(stage.to_spec()))
    rebuilt = BaseTaskStage.from_spec(spec)
    assert isinstance(rebuilt, PlaceCubeStage)
    assert rebuilt.stage_input == stage.stage_input
    assert [g.to_spec() for g in rebuilt.goals] == [g.to_spec() for g in stage.goals]
    assert (rebuilt.target_tool_calls, rebuilt.max_tool_calls) == (2, 5)
    assert rebuilt.global_parameters == stage.global_parameters
    assert rebuilt.entry_transition.x == 0.25  # type: ignore[union-attr]
    assert rebuilt.to_spec() == stage.to_spec()


def test_stage_spec_needs_own_arguments() -> None:
    class Derived(PlaceCubeStage):
        pass

    with pytest.raises(NotImplementedError, match="Derived"):
        Derived("go").to_spec()
    with pytest.raises(TypeError):
        CompletionAnswerStage.from_spec(PlaceCubeStage("go").to_spec())


def test_stage_spec_arguments_must_be_a_dict() -> None:
    class ListArgs(GenericStage):
        def _to_spec_arguments(self):
            return [1, 2]

    with pytest.raises(TypeError):
        ListArgs().to_spec()


def test_parameters_round_trip() -> None:
    gp = StageGlobalParameters(True, True, TEXT, True, ["look"], TextOnlyValidationMode.SAY_ONLY)
    assert StageGlobalParameters.from_spec(json.loads(json.dumps(gp.to_spec()))) == gp
    ep = StageErrorParameters([FailGrasp("x"), Noop()], 0, 2)
    rebuilt = StageErrorParameters.from_spec(json.loads(json.dumps(ep.to_spec())))
    assert [type(e) for e in rebuilt.possible_errors] == [FailGrasp, Noop]
    assert rebuilt.possible_errors[0].message == "x"  # type: ignore[attr-defined]
    assert (rebuilt.min_active_errors, rebuilt.max_active_errors) == (0, 2)


# -- templates -----------------------------------------------------------------------------------
def test_composite_is_unsupported() -> None:
    with pytest.raises(NotImplementedError):
        BaseStageComposite([GenericStage()], [1], StageInput(UserInstruction("a"), False))


def test_completion_answer_stage_without_tools() -> None:
    stage = CompletionAnswerStage()
    gp = stage.global_parameters
    assert stage.is_text_only() and gp.text_only_validation is TextOnlyValidationMode.SAY_ONLY
    assert isinstance(stage.stage_input.instruction, EmptyInstruction)
    assert stage.stage_input.linked_to_prev and not stage.stage_input.flag_answer_to_user
    assert stage.goals == [] and (stage.target_tool_calls, stage.max_tool_calls) == (0, 0)
    assert not gp.allow_tools_before_answer and gp.allowed_tools == [] and not gp.reset_at_end


def test_completion_answer_stage_with_detection_tools() -> None:
    stage = CompletionAnswerStage(["scan", "look", "scan"], reset_at_end=True)
    gp = stage.global_parameters
    assert gp.allow_tools_before_answer and gp.allowed_tools == ["look", "scan"]
    assert (stage.target_tool_calls, stage.max_tool_calls) == (1, 3) and gp.reset_at_end
    rebuilt = BaseTaskStage.from_spec(json.loads(json.dumps(stage.to_spec())))
    assert isinstance(rebuilt, CompletionAnswerStage) and rebuilt.global_parameters == gp


def test_completion_answer_stage_arguments() -> None:
    with pytest.raises(TypeError):
        CompletionAnswerStage("look")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CompletionAnswerStage(["look"], reset_at_end=1)  # type: ignore[arg-type]


def test_goal_base_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseGoal()  # type: ignore[abstract]
