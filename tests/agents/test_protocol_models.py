"""Protocol 2.0 models: strictness, consistency rules, validate_request, engine conversions."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from magma_core.protocol.agent import (
    AgentDecision,
    AgentHealth,
    AgentInfo,
    AgentInput,
    AgentOutput,
    AgentRequest,
    AgentResponse,
    AgentToolCall,
)
from magma_core.simulation.data_structures import Decision
from magma_core.simulation.data_structures import ToolCall as EngineToolCall


def _input(i: int, n: int = 1) -> dict:
    return {"id": i, "instruction": {"type": "user", "content": "hi"}, "num_outputs": n}


def _output(source: int, index: int, request_id: str = "r") -> dict:
    return {"request_id": request_id, "source_id": source, "candidate_index": index,
            "status": "completed", "memory": {}, "output": {"say": "ok"}}


def test_request_defaults_and_unique_ids():
    request = AgentRequest.model_validate({"request_id": "r", "inputs": [_input(3)]})
    agent_input = request.inputs[0]
    assert (agent_input.tools, agent_input.attributes, agent_input.memory, agent_input.num_outputs) == ([], {}, {}, 1)
    with pytest.raises(ValidationError, match="appears more than once"):
        AgentRequest.model_validate({"request_id": "r", "inputs": [_input(1), _input(1)]})
    with pytest.raises(ValidationError):
        AgentRequest.model_validate({"request_id": "", "inputs": [_input(1)]})
    with pytest.raises(ValidationError):
        AgentRequest.model_validate({"request_id": "r", "inputs": []})


@pytest.mark.parametrize("patch", [
    {"id": "1"}, {"id": True}, {"id": 1.0}, {"num_outputs": 0}, {"surprise": 1},
    {"instruction": {"type": "system", "content": "x"}}, {"memory": {"x": float("nan")}},
    {"attributes": {"x": [float("inf")]}}, {"tools": [["not", "an", "object"]]},
])
def test_input_is_strict(patch):
    with pytest.raises(ValidationError):
        AgentInput.model_validate({**_input(1), **patch})


def test_output_status_consistency():
    AgentOutput.model_validate(_output(0, 0))
    with pytest.raises(ValidationError, match="completed output"):
        AgentOutput.model_validate({**_output(0, 0), "output": None})
    with pytest.raises(ValidationError, match="error output"):
        AgentOutput.model_validate({**_output(0, 0), "status": "error"})
    with pytest.raises(ValidationError, match="memory"):
        AgentOutput.model_validate({k: v for k, v in _output(0, 0).items() if k != "memory"})
    error = {**_output(0, 0), "status": "error", "output": None, "error": {"code": "x", "message": "y"}}
    assert AgentOutput.model_validate(error).error.code == "x"


def test_validate_request_order_and_count():
    request = AgentRequest.model_validate({"request_id": "r", "inputs": [_input(5, 2), _input(1)]})
    good = [_output(5, 0), _output(5, 1), _output(1, 0)]
    AgentResponse.model_validate(good).validate_request(request)
    with pytest.raises(ValueError, match="has 4 outputs.*asks for 3"):
        AgentResponse.model_validate(good + [_output(1, 1)]).validate_request(request)
    with pytest.raises(ValueError, match="output 0"):
        AgentResponse.model_validate([good[1], good[0], good[2]]).validate_request(request)
    with pytest.raises(ValueError, match="request_id='other'"):
        AgentResponse.model_validate([good[0], good[1], _output(1, 0, "other")]).validate_request(request)


def test_info_and_health():
    info = AgentInfo.model_validate({"agent_id": "a", "agent_version": "1"})
    assert info.protocol_version == "2.0"
    with pytest.raises(ValidationError):
        AgentInfo.model_validate({"agent_id": "a", "agent_version": "1", "protocol_version": "1.0"})
    assert AgentHealth().model_dump() == {"status": "ready"}
    with pytest.raises(ValidationError):
        AgentHealth.model_validate({"status": "loading"})


def test_decision_conversions_round_trip():
    engine = Decision(say="hello", tool_calls=[EngineToolCall("pick", {"x": 1}, "r1"), EngineToolCall("wait", {}, None)])
    wire = AgentDecision.from_decision(engine, default_robot="r2")
    assert wire.tool_calls[1].target_robot_name == "r2"
    back = wire.to_decision()
    assert back.say == "hello" and back.tool_calls[0] == EngineToolCall("pick", {"x": 1}, "r1")
    with pytest.raises(ValueError, match="names no robot"):
        AgentDecision.from_decision(engine)
    with pytest.raises(ValidationError):
        AgentToolCall.model_validate({"name": "", "arguments": {}, "target_robot_name": "r"})


def test_json_round_trip():
    request = AgentRequest.model_validate({"request_id": "r", "inputs": [_input(1, 2)]})
    assert AgentRequest.model_validate_json(request.model_dump_json()) == request
    response = AgentResponse.model_validate([_output(1, 0), _output(1, 1)])
    assert json.loads(response.model_dump_json())[1]["candidate_index"] == 1
    assert len(response) == 2 and [o.candidate_index for o in response] == [0, 1]
