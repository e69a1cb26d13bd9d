"""Errors: BaseError defaults, ToolErrorSupport, and the hooks ToolExecution runs."""

from __future__ import annotations

import random

import pytest

from contract.scenario_examples import FailGrasp, FlipResult, NeedsArgument, Noop
from magma_core.simulation.data_structures import ToolErrorFlag, ToolExecution, ToolResult
from magma_core.simulation.errors import BaseError, ToolErrorSupport
from magma_core.simulation.stage import StageErrorParameters


def execution(*supports: ToolErrorSupport, verifier_ok: bool = True) -> ToolExecution:
    return ToolExecution(
        ["OK"], lambda raw_obs: ToolResult(ok=verifier_ok, reason="verified"),
        compatible_error_supports=list(supports),
    )


def test_base_error_defaults() -> None:
    error = BaseError()
    assert error.get_name() == "BaseError" and Noop().get_name() == "Noop"
    assert error.initialize(None, 0) == {}  # type: ignore[arg-type]
    assert error.apply_pre_exec(execution(), {}) is False
    assert error.apply_post_verif(ToolResult(ok=True), {}) is False
    assert error.get_description({}) == ""


def test_validate_arguments() -> None:
    class Keyed(BaseError):
        required_key = ("target",)
        optional_key = ("count",)

    assert Keyed().validate_arguments({"target": "cube"}) == {"target": "cube"}
    with pytest.raises(ValueError):
        Keyed().validate_arguments({"count": 1})
    with pytest.raises(ValueError):
        Keyed().validate_arguments({"target": "cube", "other": 1})
    with pytest.raises(TypeError):
        Keyed().validate_arguments(["target"])  # type: ignore[arg-type]


def test_tool_error_support() -> None:
    support = ToolErrorSupport(FailGrasp)
    assert (support.error_type, support.pre, support.post) == (FailGrasp, True, True)
    assert ToolErrorSupport(FailGrasp, pre=False).post is True
    with pytest.raises(TypeError):
        ToolErrorSupport(FailGrasp, pre=False, post=False)
    for bad in (FailGrasp(), int, NeedsArgument, "FailGrasp"):
        with pytest.raises(TypeError):
            ToolErrorSupport(bad)  # type: ignore[arg-type]


def test_pre_hooks_only_for_supported_active_errors() -> None:
    tool = execution(ToolErrorSupport(Noop))
    tool.set_execution_info("move", 0, [FailGrasp(), Noop()])
    assert [e.get_name() for e, _ in tool.active_errors] == ["Noop"]
    tool.apply_pre_exec_errors({"FailGrasp": {}, "Noop": {}})
    assert not tool.has_error() and not tool.injection_applied


def test_pre_hook_fails_the_call_and_records_injection() -> None:
    tool = execution(ToolErrorSupport(FailGrasp))
    tool.set_execution_info("move", 2, [FailGrasp("slip")])
    args: dict = {"FailGrasp": None}
    tool.apply_pre_exec_errors(args)
    assert tool.has_error() and tool.reason == "slip" and tool.injection_applied
    assert args == {"FailGrasp": {"seen": 1}}  # lazily bound, then used
    assert tool.get_error_description(args) == "grasps may fail"


def test_pre_hooks_stop_once_failed() -> None:
    class SecondFail(FailGrasp):
        pass

    tool = execution(ToolErrorSupport(FailGrasp))
    tool.set_execution_info("move", 0, [FailGrasp("first"), SecondFail("second")])
    args: dict = {"FailGrasp": {}, "SecondFail": {}}
    tool.apply_pre_exec_errors(args)
    assert tool.reason == "first" and args["SecondFail"] == {}


def test_pre_hook_skipped_when_inactive_or_pre_disabled() -> None:
    tool = execution(ToolErrorSupport(FailGrasp))
    tool.set_execution_info("move", 0, [FailGrasp()])
    tool.apply_pre_exec_errors({})  # selected by no stage state
    assert not tool.has_error()
    tool = execution(ToolErrorSupport(FailGrasp, pre=False))
    tool.set_execution_info("move", 0, [FailGrasp()])
    tool.apply_pre_exec_errors({"FailGrasp": {}})
    assert not tool.has_error()


def test_post_hook_edits_result() -> None:
    tool = execution(ToolErrorSupport(FlipResult))
    tool.set_execution_info("move", 1, [FlipResult()])
    result = tool.call_verifier({}, {"FlipResult": {}})
    assert result.ok is False and result.reason == "flipped" and tool.injection_applied


def test_post_hook_that_does_nothing_is_not_an_injection() -> None:
    tool = execution(ToolErrorSupport(Noop), verifier_ok=False)
    tool.set_execution_info("move", 1, [Noop()])
    result = tool.call_verifier({}, {"Noop": {}})
    assert result.ok is False and not tool.injection_applied
    assert tool.failure_flag is ToolErrorFlag.NONE


def test_error_spec_round_trip() -> None:
    spec = FailGrasp("custom").to_spec()
    assert spec["arguments"] == {"message": "custom"}
    rebuilt = BaseError.from_spec(spec)
    assert isinstance(rebuilt, FailGrasp) and rebuilt.message == "custom"
    with pytest.raises(TypeError):
        FlipResult.from_spec(spec)


def test_error_sampling_is_seeded_and_bounded() -> None:
    errors = [FailGrasp(), FlipResult(), Noop()]
    params = StageErrorParameters(errors, min_active_errors=1, max_active_errors=2)
    draws = [params.sample(random.Random(seed)) for seed in range(30)]
    assert all(1 <= len(d) <= 2 and len({e.get_name() for e in d}) == len(d) for d in draws)
    assert {len(d) for d in draws} == {1, 2}
    again = [params.sample(random.Random(seed)) for seed in range(30)]
    assert [[e.get_name() for e in d] for d in draws] == [[e.get_name() for e in d] for d in again]
    clamped = StageErrorParameters([Noop()], min_active_errors=2, max_active_errors=3)
    assert [e.get_name() for e in clamped.sample(random.Random(0))] == ["Noop"]
    assert StageErrorParameters([], 1, 1).sample(random.Random(0)) == []
