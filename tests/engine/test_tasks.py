"""Tasks: fields, per-instance defaults, validation, completion-stage materialisation, traces."""

from __future__ import annotations

import pytest

from engine.scenario import (
    SITUATION,
    AskStage,
    CubeTools,
    MachineStage,
    PlaceCubeStage,
    SeedTask,
    make_task,
)
from magma_core.simulation.data_structures import Decision, SituationInit, ToolCall
from magma_core.simulation.stage import CompletionAnswerStage, TextOnlyValidationMode
from magma_core.simulation.tasks import (
    BaseTask,
    InitializationParameters,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
    materialize_completion_stages,
)


class DeclaredTask(BaseTask):
    maniskill_env_id = "MagmaCube-v1"
    Tools_cls = CubeTools
    situation_init = SITUATION
    stages = [MachineStage()]


def test_defaults_and_name() -> None:
    task = DeclaredTask()
    assert task.name == "DeclaredTask"
    assert task.tools_constant == {}
    assert task.initialization_parameters == InitializationParameters()
    assert task.initialization_parameters.env_options == {}
    assert task.initialization_parameters.agent_names is None
    assert task.perfect_trace() is None
    task.validate()


def test_mutable_defaults_are_per_instance() -> None:
    a, b = DeclaredTask(), DeclaredTask()
    a.tools_constant["k"] = 1
    a.initialization_parameters.env_options["x"] = 1
    a.stages.append(MachineStage())
    a.situation_init.attributes["objects"].append("ball")
    assert b.tools_constant == {}
    assert b.initialization_parameters.env_options == {}
    assert len(b.stages) == 1
    assert DeclaredTask.stages is not a.stages and len(DeclaredTask.stages) == 1
    assert b.situation_init.attributes["objects"] == ["cube"]
    assert SITUATION.attributes["objects"] == ["cube"]


def test_keyword_fields_and_unknown_field() -> None:
    task = make_task([MachineStage()], name="N", tools_constant={"speed": 1})
    assert task.name == "N" and task.tools_constant == {"speed": 1}
    with pytest.raises(TypeError, match="unknown fields"):
        BaseTask(colour="red")


def test_initialization_parameters_checks() -> None:
    assert InitializationParameters(agent_names=["a", "b"]).agent_names == ["a", "b"]
    with pytest.raises(TypeError):
        InitializationParameters(agent_names=["a", "a"])
    with pytest.raises(TypeError):
        InitializationParameters(agent_names=[""])
    with pytest.raises(TypeError):
        InitializationParameters(env_options=[1])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"stages": []}, "non-empty"),
        ({"stages": "x"}, "non-empty"),
        ({"maniskill_env_id": ""}, "maniskill_env_id"),
        ({"Tools_cls": dict}, "Tools_cls"),
        ({"situation_init": {"attributes": {}}}, "situation_init"),
        ({"tools_constant": []}, "tools_constant"),
        ({"stages": [object()]}, "not a BaseTaskStage"),
    ],
)
def test_validate_rejects_bad_fields(fields: dict, message: str) -> None:
    base = {
        "maniskill_env_id": "MagmaCube-v1",
        "Tools_cls": CubeTools,
        "situation_init": SituationInit({}),
        "stages": [MachineStage()],
    }
    base.update(fields)
    task = BaseTask(**base)
    with pytest.raises(TypeError, match=message):
        task.validate()


def test_validate_reports_missing_fields() -> None:
    with pytest.raises(TypeError, match="missing required task fields"):
        BaseTask(stages=[MachineStage()]).validate()


def test_validate_runs_each_stage_validate() -> None:
    stage = MachineStage()
    stage.global_parameters.allow_tools_before_answer = True  # needs a verification prompt
    with pytest.raises(TypeError, match="allow_tools_before_answer"):
        make_task([stage]).validate()


def test_validate_rejects_empty_instruction_after_flagged_stage() -> None:
    flagged = PlaceCubeStage(flag=True)
    follower = PlaceCubeStage("zone_b", instruction=None)
    with pytest.raises(TypeError, match="flag_answer_to_user"):
        make_task([flagged, follower]).validate()
    make_task([flagged, PlaceCubeStage("zone_b", "Now zone B.")]).validate()
    make_task([PlaceCubeStage(), follower]).validate()


def test_materialize_inserts_completion_after_flagged_stages() -> None:
    first = PlaceCubeStage(flag=True, reset_at_end=True)
    first.request_type = "PlaceRequest"
    middle = MachineStage()
    last = PlaceCubeStage("zone_b", "Zone B.", flag=True)
    stages = [first, middle, last]
    out = materialize_completion_stages(stages, CubeTools)
    assert [type(s).__name__ for s in out] == [
        "PlaceCubeStage",
        "CompletionAnswerStage",
        "MachineStage",
        "PlaceCubeStage",
        "CompletionAnswerStage",
    ]
    completion = out[1]
    assert isinstance(completion, CompletionAnswerStage)
    assert completion.global_parameters.allowed_tools == ["detect", "poke"]
    assert completion.global_parameters.allow_tools_before_answer
    assert completion.global_parameters.text_only_validation is TextOnlyValidationMode.SAY_ONLY
    assert completion.global_parameters.reset_at_end is True
    assert completion.stage_input.linked_to_prev
    assert completion.request_type == "PlaceRequest"
    assert out[4].global_parameters.reset_at_end is False
    # the flag is cleared and reset_at_end moved, on copies only
    assert out[0].stage_input.flag_answer_to_user is False
    assert out[0].global_parameters.reset_at_end is False
    assert out[0].stage_input.instruction == first.stage_input.instruction
    assert first.stage_input.flag_answer_to_user is True
    assert first.global_parameters.reset_at_end is True
    assert all(a is not b for a, b in zip(out, [first, None, middle, last, None], strict=True))
    assert out[2] is not middle and out[2].global_parameters is not middle.global_parameters
    assert stages == [first, middle, last]


def test_materialize_without_detection_tools_gives_a_no_tool_completion() -> None:
    from magma_core.simulation.tools import BaseToolsAPI

    class NoDetection(BaseToolsAPI):
        pass

    (stage, completion) = materialize_completion_stages([PlaceCubeStage(flag=True)], NoDetection)
    assert completion.global_parameters.allowed_tools == []
    assert not completion.global_parameters.allow_tools_before_answer
    assert (completion.target_tool_calls, completion.max_tool_calls) == (0, 0)


def test_materialize_is_idempotent_without_flags() -> None:
    out = materialize_completion_stages([MachineStage(), AskStage()], CubeTools)
    assert [type(s).__name__ for s in out] == ["MachineStage", "AskStage"]


def test_seed_task_trace_round_trips() -> None:
    task = SeedTask()
    task.validate()
    trace = task.perfect_trace()
    assert isinstance(trace, PerfectTrace)
    decisions = trace.decisions()
    assert decisions[0] == Decision(tool_calls=[ToolCall("switch_machine", {"on": True})])
    assert decisions[3] == Decision(say="The cube is in zone A.")
    assert len(decisions) == 6
    again = PerfectTrace.from_dict(trace.to_dict())
    assert again.decisions() == decisions
    assert isinstance(again.events[0], UserEvent)
    assert isinstance(again.events[1], ToolCallEvent)
    assert isinstance(again.events[5], MessageEvent)
