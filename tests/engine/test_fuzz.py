"""Property-based: whatever an agent sends, the engine records it and never raises."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.fakes import FakeMotion, FakeSim
from engine.scenario import MachineStage, PlaceCubeStage, make_task
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor

TOOL_NAMES = ["pick", "place", "switch_machine", "detect", "push", "nope", "", "__class__"]
ROBOTS = ["panda", "robot", "", None, "panda-1"]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.integers(min_value=5000, max_value=20000).map(lambda n: "y" * n)
)
values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
arguments = st.one_of(
    st.dictionaries(st.sampled_from(["object", "area", "on", "x", "y", "extra", ""]), values,
                    max_size=4),
    values,
)
calls = st.one_of(
    st.builds(ToolCall, st.sampled_from(TOOL_NAMES), arguments, st.sampled_from(ROBOTS)),
    st.dictionaries(st.sampled_from(["name", "arguments", "target_robot_name", "junk"]), values,
                    max_size=4),
    values,
)
decisions = st.one_of(
    st.builds(Decision, st.text(max_size=50), st.lists(calls, max_size=4)),
    st.dictionaries(st.sampled_from(["say", "tool_calls", "extra"]),
                    st.one_of(values, st.lists(calls, max_size=3)), max_size=3),
    values,
)


def _executor() -> Executor:
    sim = FakeSim(2)
    task = make_task([MachineStage(), PlaceCubeStage()])
    return Executor(task, 2, sim=sim, motion=FakeMotion(sim))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(decisions, decisions), min_size=1, max_size=4))
def test_any_decisions_are_recorded_and_never_raise(steps):
    executor = _executor()
    for first, second in steps:
        outcomes = executor.submit({0: first, 1: second})
        assert set(outcomes) == {0, 1}
        for slot, outcome in outcomes.items():
            assert outcome.status in {"running", "success", "failed", "exceeded"}, (
                slot, outcome.status, executor.record(slot).traceback)
            for call in outcome.calls:
                assert isinstance(call.message, str)
    for slot in (0, 1):
        text = json.dumps(executor.record(slot).to_dict(), allow_nan=False)
        assert "Traceback" not in text
        view = executor.agent_view(slot)
        assert isinstance(view.instruction, str)


def test_nan_and_huge_arguments_are_bad_calls_not_crashes():
    executor = _executor()
    nan_call = ToolCall("switch_machine", {"on": math.nan}, "panda")
    big_call = ToolCall("switch_machine", {"on": "x" * 100_000}, "panda")
    outcomes = executor.submit({0: Decision(tool_calls=[nan_call]), 1: Decision(tool_calls=[big_call])})
    for outcome in outcomes.values():
        [call] = outcome.calls
        assert not call.ok and call.failure_flag.value == "bad_call"
        assert len(call.message) < 2000
    inf_call = ToolCall("pick", {"object": math.inf}, "panda")
    executor.submit({0: Decision(tool_calls=[inf_call])})
    for slot in (0, 1):
        json.dumps(executor.record(slot).to_dict(), allow_nan=False)  # strict JSON
