"""Requests written for the predecessor run beside ours: ``sample_parameters(state)`` with the
global ``random`` (seeded per task), ``build_perfect_trace`` returning a ``PerfectTrace`` with
its event kinds, and the TSR checkpoint mode."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from magma_core.simulation.data_structures import SituationInit, StageInput, UserInstruction
from magma_core.simulation.requests import (
    BaseRequest,
    Call,
    MessageEvent,
    PerfectTrace,
    TodoRef,
    ToolCallEvent,
    ToolResultEvent,
    TraceToolResult,
    UserEvent,
)
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import TaskDefinition


class Say(BaseTaskStage):
    target_tool_calls = 1
    max_tool_calls = 2

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__([], "done", StageInput(UserInstruction(text), False))

    def verif_log_completion(self, stage_log, full_log) -> int:
        return 1 if stage_log else 0

    def _to_spec_arguments(self) -> dict:
        return {"text": self.text}


@dataclass(frozen=True)
class Params:
    n: int


class OldStyle(BaseRequest):
    def sample_parameters(self, state):
        return Params(random.randint(0, 10 ** 6))

    def create_stages(self, state, params):
        return [Say(f"call {params.n}")]

    def build_perfect_trace(self, state, params):
        return PerfectTrace([
            UserEvent(f"call {params.n}"),
            ToolCallEvent([Call("note", {"n": params.n}, "panda"), Call("note", {"n": 0}, "panda")],
                          completed_todos=[TodoRef("t1")]),
            ToolResultEvent([TraceToolResult("panda", "note", "noted")]),
            MessageEvent("noted", mode="execution_report"),
        ])


class NoTrace(OldStyle):
    def build_perfect_trace(self, state, params):
        return None


class Old(TaskDefinition):
    maniskill_env_id = "X-v1"
    Tools_cls = object
    situation_init = SituationInit({"objects": []})
    active_requests = [OldStyle()]
    max_target_tool_calls = 3


def test_old_style_requests_are_seeded_and_their_traces_kept() -> None:
    random.seed(123)
    before = random.random()
    random.seed(123)
    first, again = Old().generate(5), Old().generate(5)
    assert random.random() == before  # the global generator is restored
    assert [s.text for s in first.stages] == [s.text for s in again.stages]
    assert [s.text for s in Old().generate(6).stages] != [s.text for s in first.stages]
    assert first.requests[0].parameters == {"n": int(first.stages[0].text.split()[1])}
    trace = first.trace
    kinds = [type(e).__name__ for e in trace.events[:4]]
    assert kinds == ["UserEvent", "ToolCallEvent", "ToolResultEvent", "MessageEvent"]
    assert trace.nb_decision == 3  # one per ToolCallEvent (a multi-call event counts once)
    assert len(trace.decisions()) == 6  # the agent side: 3 tool-call + 3 message decisions
    rebuilt = PerfectTrace.from_dict(trace.to_dict())
    assert rebuilt.to_dict() == trace.to_dict()
    assert rebuilt.events[3].mode == "execution_report" and rebuilt.events[1].completed_todos == [TodoRef("t1")]


def test_tsr_checkpoint_mode_needs_every_trace() -> None:
    with pytest.raises(ValueError, match="TSR checkpoint mode"):
        Old(active_requests=[NoTrace()], checkpoint_mode="TSR").generate(0)
    assert Old(active_requests=[NoTrace()]).generate(0).trace is None
    with pytest.raises(ValueError, match="mode"):
        MessageEvent("x", mode="shout")
    with pytest.raises(ValueError, match="at least one"):
        ToolResultEvent([])
