"""What the engine hands out: the agent's view, the outcome of a step, the episode record.

All of it is plain data. ``to_dict()`` gives JSON-serialisable dicts (tensors become lists,
enums their values), so front ends can store or print records without knowing the engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import StageState, StageSuccess, ToolErrorFlag
from magma_core.simulation.data_structures.jsonable import jsonable
from magma_core.simulation.executor.normalize import NormalizedDecision
from magma_core.simulation.executor.world import world_digest

# Episode statuses set by the engine. Front ends may end an episode with statuses of their
# own (e.g. "no_action", "decision_cap") through ``Executor.end_episode``.
RUNNING = "running"
SUCCESS = "success"
FAILED = "failed"
EXCEEDED = "exceeded"
ERROR = "error"
JUDGE_UNAVAILABLE = "judge_unavailable"  # the judge gave no verdict: neither side's fault
JUDGE_ERROR = "judge_error"  # the judge's reply held no verdict: this episode only, the run goes on
ENGINE_STATUSES = (RUNNING, SUCCESS, FAILED, EXCEEDED, ERROR, JUDGE_UNAVAILABLE, JUDGE_ERROR)

ViewKind = Literal["user", "env"]


@dataclass
class ViewMessage:
    """One input message for the agent: the user's words (``user``) or engine feedback (``env``)."""

    kind: ViewKind
    content: str

    def to_dict(self) -> JSONDict:
        return {"kind": self.kind, "content": self.content}


@dataclass
class AgentView:
    """What the agent sees before its next decision in one slot.

    ``instruction``/``kind`` is the input to answer; ``messages`` lists every input in order
    (two when a delayed user input follows the last batch's status). ``feedback`` is the
    last batch's status dict (None before the first decision of an episode).
    ``callable_tools``: the tool names the stage lets the agent call (None: every tool; a
    text-only stage allows none unless it allows tools before its answer).
    """

    slot: int
    instruction: str
    kind: ViewKind
    messages: list[ViewMessage]
    tools: list[JSONDict]
    attributes: JSONDict
    robot_names: list[str]
    stage_index: int
    num_stages: int
    linked_to_prev: bool
    text_only: bool
    episode_over: bool
    status: str
    feedback: JSONDict | None = None
    callable_tools: list[str] | None = None

    def to_dict(self) -> JSONDict:
        return {
            "slot": self.slot,
            "instruction": self.instruction,
            "kind": self.kind,
            "messages": [m.to_dict() for m in self.messages],
            "tools": jsonable(self.tools),
            "attributes": jsonable(self.attributes),
            "robot_names": list(self.robot_names),
            "stage_index": self.stage_index,
            "num_stages": self.num_stages,
            "linked_to_prev": self.linked_to_prev,
            "text_only": self.text_only,
            "episode_over": self.episode_over,
            "status": self.status,
            "feedback": jsonable(self.feedback),
            "callable_tools": None if self.callable_tools is None else list(self.callable_tools),
        }


@dataclass
class CallOutcome:
    """The outcome of one tool call: ``ok`` is the call's result, never the stage's."""

    robot: str | None
    tool: str
    arguments: JSONDict
    ok: bool
    message: str
    failure_flag: ToolErrorFlag = ToolErrorFlag.NONE
    message_is_public: bool = False
    injected: bool = False
    forgiven: bool = False
    must_fail_stage: bool = False
    log: JSONDict | None = None
    state_updates: list[JSONDict] = field(default_factory=list)
    context: JSONDict = field(default_factory=dict)
    attempts: int = 1

    def to_line(self) -> str:
        """Feedback line ``robot: tool succeed|failed with message: …`` ("" without message)."""
        if not self.message:
            return ""
        verb = "succeed" if self.ok else "failed"
        return f"{self.robot or '?'}: {self.tool} {verb} with message: {self.message}"

    def to_dict(self) -> JSONDict:
        return {
            "robot": self.robot,
            "tool": self.tool,
            "arguments": jsonable(self.arguments),
            "ok": self.ok,
            "message": self.message,
            "failure_flag": self.failure_flag.value,
            "message_is_public": self.message_is_public,
            "injected": self.injected,
            "forgiven": self.forgiven,
            "must_fail_stage": self.must_fail_stage,
            "log": jsonable(self.log),
            "state_updates": jsonable(self.state_updates),
            "context": jsonable(self.context),
            "attempts": self.attempts,
        }


def failed_calls_note(calls: Iterable[CallOutcome], limit: int = 2) -> str:
    """``"; N failed call(s): robot.tool(k=v): MESSAGE; ..."`` for the failed ``calls`` (the
    first ``limit`` shown, ``(+M more)`` after), "" when none failed: appended to the reason
    of an episode that ends without success, so that it says what went wrong."""
    failed = [c for c in calls if not c.ok]
    if not failed:
        return ""
    shown = "; ".join(f"{_call_text(c)}: {c.message or c.failure_flag.name.lower()}"
                      for c in failed[:limit])
    more = f" (+{len(failed) - limit} more)" if len(failed) > limit else ""
    return f"; {len(failed)} failed {'call' if len(failed) == 1 else 'calls'}: {shown}{more}"


def _call_text(call: CallOutcome) -> str:
    arguments = ", ".join(f"{k}={v!r}" for k, v in (call.arguments or {}).items())
    return f"{call.robot + '.' if call.robot else ''}{call.tool}({arguments})"


@dataclass
class StepOutcome:
    """What one submitted decision did in one slot, and what the agent sees next.

    ``stage_index`` is the stage the decision was made in; ``next_view.stage_index`` tells
    where the episode is now. ``verification`` is the stage score (-1/0/1), None when the
    stage was not verified (e.g. a no-action step).
    """

    slot: int
    step_index: int
    stage_index: int
    calls: list[CallOutcome]
    stage_success: StageSuccess
    stage_state: StageState
    status: str
    message: str
    next_view: AgentView
    verification: int | None = None
    failure_reason: str | None = None
    tool_calls: int = 0
    forgiven_tool_calls: int = 0

    @property
    def episode_over(self) -> bool:
        return self.status != RUNNING

    def to_dict(self) -> JSONDict:
        return {
            "slot": self.slot,
            "step_index": self.step_index,
            "stage_index": self.stage_index,
            "calls": [c.to_dict() for c in self.calls],
            "stage_success": self.stage_success.name,
            "stage_state": self.stage_state.name,
            "status": self.status,
            "message": self.message,
            "verification": self.verification,
            "failure_reason": self.failure_reason,
            "tool_calls": self.tool_calls,
            "forgiven_tool_calls": self.forgiven_tool_calls,
            "next_view": self.next_view.to_dict(),
        }


@dataclass
class StepRecord:
    """One decision in the episode record: its input, the decision, calls and verdict."""

    step_index: int
    stage_index: int
    inputs: list[ViewMessage]
    decision: NormalizedDecision
    calls: list[CallOutcome]
    stage_success: str
    stage_state: str
    verification: int | None
    status: str
    message: str
    failure_reason: str | None
    tool_calls: int
    forgiven_tool_calls: int
    timings: dict[str, float]
    judge: JSONDict | None = None
    notes: list[str] = field(default_factory=list)
    error_descriptions: list[str] = field(default_factory=list)  # the stage's active errors

    def to_dict(self) -> JSONDict:
        return jsonable(self.__dict__)


@dataclass
class StageRecord:
    """How one stage of the episode went."""

    index: int
    name: str
    description: str
    text_only: bool
    target_tool_calls: int | None
    max_tool_calls: int | None
    started: bool = False
    success: str | None = None
    state: str | None = None
    tool_calls: int = 0
    forgiven_tool_calls: int = 0
    active_errors: JSONDict = field(default_factory=dict)
    error_descriptions: list[str] = field(default_factory=list)

    def to_dict(self) -> JSONDict:
        return jsonable(self.__dict__)


@dataclass
class EpisodeRecord:
    """Everything that happened in one episode of one slot (JSON-serialisable via ``to_dict``)."""

    task: str
    env_id: str
    slot: int
    seed: int
    robot_names: list[str]
    stages: list[StageRecord]
    steps: list[StepRecord] = field(default_factory=list)
    logs: list[JSONDict] = field(default_factory=list)
    status: str = RUNNING
    reason: str = ""
    traceback: str | None = None
    attributes: JSONDict = field(default_factory=dict)
    started_at: float = 0.0
    ended_at: float | None = None
    wall_s: float = 0.0
    engine_s: float = 0.0
    sim_steps: int = 0
    #: World states for replays (see ``executor.world``): [0] at the start, [i + 1] after
    #: step i. Kept out of ``to_dict()``; ``world_dict()`` gives them with the scene.
    worlds: list[JSONDict | None] = field(default_factory=list)
    scene: JSONDict = field(default_factory=dict)
    #: Scenario warnings found while the episode ran (e.g. a stage whose goals all hold
    #: when it starts: see ``executor.goal_report``); in ``to_dict()`` only when any.
    warnings: list[str] = field(default_factory=list)

    @property
    def stages_passed(self) -> int:
        return sum(1 for s in self.stages if s.success == StageSuccess.FINISH.name)

    def stage_state_counts(self) -> dict[str, int]:
        """Counts of OPTIMAL / ACCEPTABLE / UNASSESSED over finished stages, plus EXCEEDED."""
        counts = {s.name: 0 for s in StageState}
        for stage in self.stages:
            if stage.state == StageState.EXCEEDED.name:
                counts[stage.state] += 1
            elif stage.state is not None and stage.success == StageSuccess.FINISH.name:
                counts[stage.state] += 1
        return counts

    @property
    def tool_calls(self) -> int:
        return sum(s.tool_calls for s in self.stages)

    def world_dict(self) -> JSONDict:
        """The scene geometry and the world state at the start and after each step."""
        return {"scene": jsonable(self.scene), "states": jsonable(self.worlds)}

    def to_dict(self) -> JSONDict:
        return {
            "task": self.task,
            "env_id": self.env_id,
            "slot": self.slot,
            "seed": self.seed,
            "robot_names": list(self.robot_names),
            "status": self.status,
            "reason": self.reason,
            "traceback": self.traceback,
            "stages_passed": self.stages_passed,
            "num_stages": len(self.stages),
            "tool_calls": self.tool_calls,
            "stage_states": self.stage_state_counts(),
            "stages": [s.to_dict() for s in self.stages],
            "steps": [s.to_dict() for s in self.steps],
            "logs": jsonable(self.logs),
            "attributes": jsonable(self.attributes),
            "world_digest": world_digest(jsonable(self.worlds)),
            "timings": {
                "started_at": self.started_at,
                "ended_at": self.ended_at,
                "wall_s": self.wall_s,
                "engine_s": self.engine_s,
                "sim_steps": self.sim_steps,
            },
        } | ({"warnings": list(self.warnings)} if self.warnings else {})
