"""The spec format: JSON-compatible, class named by import path, nested, base-checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from contract.scenario_examples import FailGrasp, MoveCubeAtEntry, PlaceCubeStage
from magma_core.serialization import (
    TYPE_TAG,
    decode_value,
    encode_value,
    load_type,
    object_from_spec,
    object_to_spec,
)
from magma_core.simulation.data_structures import (
    EmptyInstruction,
    Instruction,
    Pose,
    StageInput,
    ToolErrorFlag,
    UserInstruction,
)
from magma_core.simulation.goals import At, BaseGoal
from magma_core.simulation.stage import BaseTaskStage, TextOnlyValidationMode


def json_round_trip(spec: dict) -> dict:
    return json.loads(json.dumps(spec, allow_nan=False))


def test_spec_format() -> None:
    spec = object_to_spec(At("cube", "goal"), {"obj": "cube", "area": "goal"})
    assert spec == {
        "type": "magma_core.simulation.goals.positional:At",
        "arguments": {"obj": "cube", "area": "goal"},
    }
    with pytest.raises(TypeError):
        object_to_spec(At("cube", "goal"), [("obj", "cube")])  # type: ignore[arg-type]


def test_local_classes_cannot_be_serialised() -> None:
    class Local(BaseGoal):
        def verify(self, obs):
            return torch.ones(1)

    with pytest.raises(ValueError, match="inside a function"):
        Local().to_spec()


@pytest.mark.parametrize(
    "instruction", [UserInstruction("Pick it.", has_constraint=True), EmptyInstruction()]
)
def test_instruction_round_trip(instruction: Instruction) -> None:
    rebuilt = Instruction.from_spec(json_round_trip(instruction.to_spec()))
    assert rebuilt == instruction and type(rebuilt) is type(instruction)


def test_stage_input_round_trip_nests_the_instruction() -> None:
    stage_input = StageInput(UserInstruction("Pick it."), True, linked_to_prev=True)
    spec = json_round_trip(stage_input.to_spec())
    assert spec["arguments"]["instruction"][TYPE_TAG] == "object"
    assert StageInput.from_spec(spec) == stage_input


def test_load_refuses_a_class_outside_the_expected_base() -> None:
    with pytest.raises(TypeError):
        object_from_spec(At("cube", "goal").to_spec(), BaseTaskStage)
    with pytest.raises(TypeError):
        object_from_spec({"type": "builtins:dict", "arguments": {}}, BaseGoal)
    with pytest.raises(TypeError):  # a function, not a class
        object_from_spec({"type": "os:system", "arguments": {"command": "true"}}, object)


def test_nested_specs_only_load_contract_classes() -> None:
    spec = StageInput(UserInstruction("a"), False).to_spec()
    spec["arguments"]["instruction"]["spec"] = {
        "type": "subprocess:Popen", "arguments": {"args": ["true"]},
    }
    with pytest.raises(TypeError):
        StageInput.from_spec(spec)


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ([], TypeError),
        ({"type": "a:B"}, ValueError),
        ({"type": "a:B", "arguments": {}, "extra": 1}, ValueError),
        ({"type": "no_colon", "arguments": {}}, ValueError),
        ({"type": 3, "arguments": {}}, ValueError),
        ({"type": "magma_core.nope:X", "arguments": {}}, ValueError),
        ({"type": "magma_core.simulation.goals:Nope", "arguments": {}}, ValueError),
        ({"type": "magma_core.simulation.goals:At", "arguments": []}, TypeError),
        ({"type": "magma_core.simulation.goals:At", "arguments": {"bogus": 1}}, TypeError),
    ],
)
def test_malformed_specs(spec: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        object_from_spec(spec, BaseGoal)  # type: ignore[arg-type]


def test_load_type_walks_qualified_names() -> None:
    assert load_type("magma_core.simulation.stage:TextOnlyValidationMode.JUDGE") is (
        TextOnlyValidationMode.JUDGE
    )


@pytest.mark.parametrize(
    "value",
    [
        None, True, 3, 2.5, "text", [1, [2, "x"]], {"a": {"b": None}},
        (1, (2, 3)), {1: "one", (2, 3): "pair"}, Path("/tmp/x"),
        TextOnlyValidationMode.SAY_ONLY, ToolErrorFlag.BAD_CALL,
        Pose((0.1, 0.2, 0.3)),
    ],
)
def test_value_codec_round_trip(value: object) -> None:
    encoded = encode_value(value)
    decoded = decode_value(json.loads(json.dumps(encoded)))
    assert decoded == value and type(decoded) is type(value)


def test_tensor_codec() -> None:
    tensor = torch.tensor([[1, 2], [3, 4]], dtype=torch.int16)
    decoded = decode_value(json.loads(json.dumps(encode_value(tensor))))
    assert torch.equal(decoded, tensor) and decoded.dtype == torch.int16


def test_codec_errors() -> None:
    with pytest.raises(TypeError):
        encode_value(object())
    with pytest.raises(ValueError):
        encode_value({TYPE_TAG: "tuple"})
    with pytest.raises(ValueError):
        decode_value({TYPE_TAG: "lambda", "value": "x"})
    with pytest.raises(ValueError):
        decode_value({TYPE_TAG: "tuple", "value": [], "more": 1})
    with pytest.raises(ValueError):
        decode_value({TYPE_TAG: "tensor", "dtype": "Tensor", "value": []})
    with pytest.raises(TypeError):
        decode_value({TYPE_TAG: "enum", "type": "builtins:dict", "value": 1})
    with pytest.raises(TypeError):
        decode_value({TYPE_TAG: "mapping", "value": [[1]]})


def test_full_stage_round_trip_is_json() -> None:
    stage = PlaceCubeStage("Put the cube on the goal.", x=0.2)
    spec = json_round_trip(stage.to_spec())
    assert spec["type"].endswith(":PlaceCubeStage")
    rebuilt = BaseTaskStage.from_spec(spec)
    assert rebuilt.to_spec() == stage.to_spec()
    assert isinstance(rebuilt.error_parameters.possible_errors[0], FailGrasp)
    assert isinstance(rebuilt.entry_transition, MoveCubeAtEntry)
