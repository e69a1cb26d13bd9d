"""Tools: registration checks, per-class registries, API description and call_tool."""

from __future__ import annotations

import pytest

from contract.scenario_examples import (
    CubeTools,
    FailGrasp,
    FlipResult,
    MoreCubeTools,
    NeedsArgument,
)
from magma_core.simulation.data_structures import (
    Observation,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.errors import ToolErrorSupport
from magma_core.simulation.tools import BaseToolsAPI, register_tool

OBS = Observation("panda", {}, {})


def tool_body(self, obs, env_id, params) -> ToolExecution:
    return ToolExecution(["OK"], lambda raw_obs: ToolResult(ok=True))


# -- registration --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "signature",
    ["def f(self, obs, env_id): pass", "def f(self, env_id, obs, params): pass",
     "def f(obs, env_id, params): pass", "def f(self, observation, env_id, params): pass"],
)
def test_signature_is_checked(signature: str) -> None:
    namespace: dict = {}
    exec(signature, namespace)
    with pytest.raises(TypeError, match="self, obs, env_id, params"):
        register_tool()(namespace["f"])


def test_extra_parameters_after_the_signature_are_fine() -> None:
    def f(self, obs, env_id, params, extra=None):
        return None

    assert register_tool()(f) is f


@pytest.mark.parametrize(
    "kwargs",
    [
        {"params_spec": {"x": {"type": float}}},
        {"params_spec": {"x": {"description": "x"}}},
        {"params_spec": {"x": {"description": "x", "type": "float"}}},
        {"params_spec": {"x": "float"}},
        {"params_spec": {"x": {"description": "x", "type": float}}, "optional": ["y"]},
        {"errors": [NeedsArgument]},
        {"errors": [FailGrasp()]},
        {"errors": [int]},
        {"is_detection": 1},
        {"is_detection": "yes"},
    ],
)
def test_registration_errors(kwargs: dict) -> None:
    with pytest.raises(TypeError):
        register_tool(**kwargs)(tool_body)


def test_registration_does_not_mutate_the_spec() -> None:
    spec = {"x": {"description": "x", "type": float}}

    class Tools(BaseToolsAPI):
        @register_tool(params_spec=spec, optional=["x"])
        def t(self, obs, env_id, params):
            return tool_body(self, obs, env_id, params)

    assert spec == {"x": {"description": "x", "type": float}}
    assert Tools.get_api_description()[0]["parameters"]["x"]["required"] is False


def test_error_supports_are_normalised() -> None:
    class Tools(BaseToolsAPI):
        @register_tool(errors=[FailGrasp, ToolErrorSupport(FlipResult, pre=False)])
        def t(self, obs, env_id, params):
            return tool_body(self, obs, env_id, params)

    supports = Tools.get_tools()[0].error_supports
    assert supports == (ToolErrorSupport(FailGrasp), ToolErrorSupport(FlipResult, pre=False))


# -- registries ----------------------------------------------------------------------------------
def test_each_class_has_its_own_registry() -> None:
    assert [t.name for t in CubeTools.get_tools()] == ["move_to", "count", "look", "refuse"]
    assert [t.name for t in MoreCubeTools.get_tools()] == ["scan"]
    assert BaseToolsAPI.get_tools() == []
    execution = MoreCubeTools().call_tool("move_to", OBS, 0, {"x": 0.1, "y": 0.2})
    assert execution.failure_flag is ToolErrorFlag.BAD_CALL
    assert "move_to is not a known tool" in execution.reason


def test_redeclared_tool_is_exposed() -> None:
    class Redeclared(CubeTools):
        @register_tool(description="Look again.", is_detection=True)
        def look(self, obs, env_id, params):
            return super().look(obs, env_id, params)

    assert [t.name for t in Redeclared.get_tools()] == ["look"]
    assert not Redeclared().call_tool("look", OBS, 0, {}).has_error()


def test_api_description() -> None:
    described = {d["name"]: d for d in CubeTools().get_api_description()}
    assert described["move_to"] == {
        "name": "move_to",
        "description": "Move the gripper above a point.",
        "parameters": {
            "x": {"description": "x in metres", "type": "float", "required": True},
            "y": {"description": "y in metres", "type": "float", "required": True},
            "label": {"description": "a note", "type": "str", "required": False},
        },
    }
    assert described["look"]["parameters"] == {}


def test_detection_tool_names() -> None:
    assert CubeTools.detection_tool_names() == ["look"]
    assert MoreCubeTools().detection_tool_names() == ["scan"]


# -- robots --------------------------------------------------------------------------------------
def test_robots_are_bound_after_construction() -> None:
    tools = CubeTools()
    with pytest.raises(RuntimeError):
        tools.get_agent("panda")
    arm, other = object(), object()
    tools.bind_robots({"panda": arm})
    assert tools.get_agent("panda") is arm and tools.get_agent() is arm
    tools.bind_robots({"panda": arm, "ur5": other})
    assert tools.get_agent("ur5") is other and tools.robot_names() == ["panda", "ur5"]
    with pytest.raises(KeyError):
        tools.get_agent("kuka")
    with pytest.raises(KeyError):
        tools.get_agent()


# -- calls ---------------------------------------------------------------------------------------
def test_valid_call() -> None:
    tools = CubeTools()
    execution = tools.call_tool("move_to", OBS, 0, {"x": 0.1, "y": 0.2, "label": "a"})
    assert not execution.has_error() and execution.poses[-1] == "CLOSE"
    assert execution.compatible_error_supports == [ToolErrorSupport(FailGrasp)]
    assert execution.execution_group == "arm" and execution.allowed_moving_actors is None


@pytest.mark.parametrize(
    ("name", "params", "reason"),
    [
        ("fly", {}, "fly is not a known tool"),
        (None, {}, "not a known tool"),
        ("move_to", ["x"], "Arguments must be a dict, got list"),
        ("move_to", None, "Arguments must be a dict"),
        ("move_to", {"x": 0.1}, "Missing arguments: y"),
        ("move_to", {"x": 0.1, "y": 0.2, "z": 1}, "Unknown arguments: z"),
        ("move_to", {"x": "0.1", "y": 0.2}, "Argument 'x' must be of type float, got str"),
        ("move_to", {"x": True, "y": 0.2}, "Argument 'x' must be of type float, got bool"),
        ("move_to", {"x": 0.1, "y": 0.2, "label": 3}, "Argument 'label' must be of type str"),
        ("count", {"n": True}, "Argument 'n' must be of type int, got bool"),
        ("count", {"n": 2.0}, "Argument 'n' must be of type int, got float"),
    ],
)
def test_bad_calls_become_failed_executions(name, params, reason: str) -> None:
    execution = CubeTools().call_tool(name, OBS, 0, params)
    assert execution.failure_flag is ToolErrorFlag.BAD_CALL
    assert reason in execution.reason
    assert execution.poses == [] and execution.verifier is None


def test_bad_call_lists_every_problem() -> None:
    reason = CubeTools().call_tool("move_to", OBS, 0, {"x": "a", "z": 1}).reason
    assert "Unknown arguments: z" in reason and "Missing arguments: y" in reason
    assert "Argument 'x'" in reason


def test_bad_call_keeps_registration_data() -> None:
    execution = CubeTools().call_tool("move_to", OBS, 0, {})
    assert execution.compatible_error_supports == [ToolErrorSupport(FailGrasp)]
    assert execution.execution_group == "arm"
    assert CubeTools().call_tool("look", OBS, 0, {"x": 1}).allowed_moving_actors == []


def test_int_is_accepted_as_float() -> None:
    tools = CubeTools()
    params = {"x": 1, "y": 0}
    assert not tools.call_tool("move_to", OBS, 0, params).has_error()
    assert tools.last_params == {"x": 1.0, "y": 0.0}
    assert isinstance(tools.last_params["x"], float) and params == {"x": 1, "y": 0}
    assert not tools.call_tool("count", OBS, 0, {"n": 3}).has_error()


def test_execution_group_of_the_execution_wins() -> None:
    assert CubeTools().call_tool("count", OBS, 0, {"n": 1}).execution_group == "own"


def test_detection_forces_no_moving_actors() -> None:
    execution = CubeTools().call_tool("look", OBS, 0, {})
    assert execution.allowed_moving_actors == [] and not execution.has_error()


def test_tool_preparation_failure_is_kept() -> None:
    execution = CubeTools().call_tool("refuse", OBS, 0, {})
    assert execution.reason == "No." and execution.must_fail_stage


def test_tool_must_return_an_execution() -> None:
    class Broken(BaseToolsAPI):
        @register_tool()
        def t(self, obs, env_id, params):
            return "done"

    with pytest.raises(TypeError, match="ToolExecution"):
        Broken().call_tool("t", OBS, 0, {})


def test_engine_flow_with_error_hooks() -> None:
    """call_tool, then the engine's set_execution_info with the stage's active errors."""
    execution = CubeTools().call_tool("move_to", OBS, 0, {"x": 0.0, "y": 0.0})
    execution.set_execution_info("move_to", 1, [FailGrasp("slip"), FlipResult()])
    execution.apply_pre_exec_errors({"FailGrasp": {}, "FlipResult": {}})
    assert execution.has_error() and execution.reason == "slip" and execution.injection_applied
