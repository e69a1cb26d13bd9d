"""The per-decision pipeline of the engine, as plain functions over an ``EngineContext``.

``Executor.submit`` runs, for each slot's decision: :func:`classify` (what kind of step it
is), the tool batches of every slot together (``batch.run_batches``), :func:`settle` (the
stage's outcome: verification, answer judging, budget; :func:`advance` moves to the next
stage or ends the episode), error sampling of newly entered stages, then :func:`conclude`
(the ``StepRecord`` and ``StepOutcome``). :func:`start_episodes` starts episodes in slots.
A scenario exception ends only its slot (:func:`fail_with_error`).
"""

from __future__ import annotations

import copy
import random
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import (
    DecisionError,
    StageState,
    StageSuccess,
    ToolErrorFlag,
)
from magma_core.simulation.executor.batch import SlotBatch
from magma_core.simulation.executor.goal_report import note_stage_start, unmet_goals
from magma_core.simulation.executor.normalize import NormalizedDecision
from magma_core.simulation.executor.records import (
    ERROR,
    EXCEEDED,
    FAILED,
    JUDGE_ERROR,
    JUDGE_UNAVAILABLE,
    SUCCESS,
    CallOutcome,
    EpisodeRecord,
    StageRecord,
    StepOutcome,
    StepRecord,
    ViewMessage,
    failed_calls_note,
)
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.executor.state_checks import ScenarioFault, check_world
from magma_core.simulation.executor.verification import (
    TEXT_ONLY_TOOL_FAILURE,
    JudgeError,
    JudgeReplyError,
    apply_entry_transition,
    attribute_edit_violation,
    judge_answer,
    sample_stage_errors,
    settle_batch,
    slice_obs,
    stage_boundary,
    verify_stage,
)
from magma_core.simulation.executor.views import (
    build_feedback,
    build_view,
    feedback_message,
    stage_entry_messages,
)
from magma_core.simulation.executor.world import scene_geometry, world_state

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.simulator import Simulator
    from magma_core.simulation.stage import BaseTaskStage

UNREAD: Final = object()  # conclude's default: read the slot's world now


@dataclass
class DecisionStep:
    """Working data of one decision in one slot during ``Executor.submit``."""

    slot: int
    decision: NormalizedDecision
    stage_index: int
    inputs: list[ViewMessage]
    kind: str = ""
    violation: str = ""
    calls: list[CallOutcome] = field(default_factory=list)
    success: StageSuccess = StageSuccess.ONGOING
    stage_state: StageState = StageState.OPTIMAL
    verification: int | None = None
    feedback: JSONDict = field(default_factory=dict)
    failure_reason: str | None = None
    verified_obs: dict[str, object] | None = None  # the slot's observation at its last goal verification
    judge: JSONDict | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    batch: SlotBatch | None = None


def has_errors(ctx: EngineContext, state: SlotState) -> bool:
    """Whether the slot's (running) current stage has errors to sample."""
    stage = ctx.stages[state.stage_index]
    return state.running and bool(stage.error_parameters.possible_errors)

def new_record(ctx: EngineContext, slot: int, seed: int) -> EpisodeRecord:
    """The empty record of an episode starting in ``slot``."""
    stages = [
        StageRecord(
            index=i,
            name=type(stage).__name__,
            description=stage.stage_goal_description,
            text_only=bool(stage.is_text_only()),
            target_tool_calls=stage.target_tool_calls,
            max_tool_calls=stage.max_tool_calls,
        )
        for i, stage in enumerate(ctx.stages)
    ]
    return EpisodeRecord(
        task=ctx.task.name,
        env_id=ctx.task.maniskill_env_id,
        slot=slot,
        seed=seed,
        robot_names=list(ctx.robot_names),
        stages=stages,
        started_at=time.time(),
        scene=scene_geometry(ctx.sim),
    )

def start_episodes(ctx: EngineContext, slots: list[int], seeds: list[int]) -> dict[int, SlotState]:
    """A new episode's state in each of ``slots`` (already reset in the simulator): stage 0
    entered, its entry transition applied and its errors sampled."""
    states: dict[int, SlotState] = {}
    attributes = copy.deepcopy(ctx.task.situation_init.attributes)
    attributes["known_robots"] = list(ctx.robot_names)
    started = []
    for slot, seed in zip(slots, seeds, strict=True):
        start = time.perf_counter()
        state = SlotState(
            slot=slot,
            seed=seed,
            rng=random.Random(seed),
            record=new_record(ctx, slot, seed),
            attributes=copy.deepcopy(attributes),
        )
        states[slot] = state
        try:
            state.reference = ctx.sim.save_slot(slot)
            check_world(getattr(state.reference, "state", {}), f"the world's reset (seed {seed})")
        except Exception as exc:
            fail_with_error(state, f"resetting the world with seed {seed}", exc)
        if state.running:
            try:
                state.enter_stage(0)
                apply_entry_transition(ctx, state)
                started.append(slot)
            except Exception as exc:
                fail_with_error(state, "applying the entry transition of stage 0", exc)
        record_world(state, ctx.sim)
        state.messages = stage_entry_messages(ctx, state, None, previous_was_action=False)
        state.record.engine_s += time.perf_counter() - start
    watched = [s for s in started if not ctx.stages[0].is_text_only() and ctx.stages[0].goals]
    raw_obs = ctx.sim.observe() if watched else None
    for slot in watched:  # stage 0's goals already holding: a scenario warning
        note_stage_start(ctx, states[slot], raw_obs)
    started = [s for s in started if has_errors(ctx, states[s])]
    if started:
        raw_obs = ctx.sim.observe() if raw_obs is None else raw_obs
        for slot in started:
            state = states[slot]
            try:
                sample_stage_errors(ctx, state, raw_obs)
            except Exception as exc:
                fail_with_error(state, "sampling errors of stage 0", exc)
    return states

def failed_start(ctx: EngineContext, slot: int, seed: int, previous: SlotState | None,
                 exc: BaseException) -> SlotState:
    """The ``error`` episode of a slot whose world reset raised ``exc`` for ``seed``.

    The slot's world goes back to the last good reset (``previous``'s reference) when there
    is one, so that a later reset starts from a sane world."""
    attributes = copy.deepcopy(ctx.task.situation_init.attributes)
    attributes["known_robots"] = list(ctx.robot_names)
    state = SlotState(slot=slot, seed=seed, rng=random.Random(seed),
                      record=new_record(ctx, slot, seed), attributes=attributes)
    fail_with_error(state, f"resetting the world with seed {seed}", exc)
    reference = previous.reference if previous is not None else None
    if reference is not None:
        state.reference = reference
        try:
            ctx.sim.restore_slot(slot, reference)
        except Exception as restore_exc:  # noted; the next reset rebuilds the episode anyway
            state.record.traceback = (state.record.traceback or "") + "".join(
                traceback.format_exception(restore_exc))
    state.record.worlds.append(None)
    return state

def classify(ctx: EngineContext, state: SlotState, decision: NormalizedDecision) -> DecisionStep:
    """What kind of step a decision is in the slot's stage: invalid, answer, violation, batch
    (tool calls to run) or no_action."""
    stage = ctx.stages[state.stage_index]
    step = DecisionStep(
        slot=state.slot,
        decision=decision,
        stage_index=state.stage_index,
        inputs=list(state.messages),
    )
    if decision.error is not None:
        step.kind = "invalid"
    elif stage.is_text_only():
        params = stage.global_parameters
        if not decision.calls:
            step.kind = "answer"
        elif not params.allow_tools_before_answer:
            step.kind, step.violation = "violation", TEXT_ONLY_TOOL_FAILURE
        else:
            allowed = list(params.allowed_tools)
            refused = [c.name for c in decision.calls if allowed and c.name not in allowed]
            if refused:
                step.kind = "violation"
                step.violation = text_only_refusal(refused[0], allowed, ctx.tool_descriptions)
            else:
                step.kind = "batch"
    else:
        step.kind = "batch" if decision.calls else "no_action"
    return step

def text_only_refusal(refused: str, allowed: list[str], tools: list[JSONDict]) -> str:
    """Why a text-only stage refuses a call, in the stage's terms: it wants an answer; the
    tools it lets the agent call first are named only when the task has them."""
    offered = {t.get("name") for t in tools if isinstance(t, dict)}
    callable_here = sorted(name for name in allowed if name in offered)
    reason = f"{refused} is not allowed in this stage: it wants an answer to the user in plain text"
    if callable_here:
        return f"{reason} (before answering it allows only {', '.join(callable_here)})."
    return f"{reason}."


def settle(
    ctx: EngineContext, state: SlotState, step: DecisionStep, obs: dict[str, object] | None
) -> bool:
    """Outcome of the step for its stage; True when a new stage was entered."""
    stage = ctx.stages[step.stage_index]
    decision_calls = [c.to_dict() for c in step.decision.calls]
    if step.kind == "invalid":
        raw = step.decision.raw
        if isinstance(raw, DecisionError):
            step.failure_reason = f"The agent gave no decision ({raw.code}): {raw.message}"
        else:
            step.failure_reason = f"The decision was malformed: {step.decision.error}"
        step.feedback = build_feedback([], infos="", failure_reason=step.failure_reason)
    elif step.kind == "no_action":
        step.feedback = build_feedback(
            [], infos="No action: the decision called no tool, and this stage needs actions."
        )
    elif step.kind == "violation":
        step.calls = [
            CallOutcome(
                robot=c.target_robot_name,
                tool=c.name,
                arguments=c.arguments if isinstance(c.arguments, dict) else {},
                ok=False,
                message=step.violation,
                failure_flag=ToolErrorFlag.BAD_CALL,  # refused by the stage: a bad call
                must_fail_stage=True,
            )
            for c in step.decision.calls
        ]
        state.tool_calls += len(step.calls)
        step.success, step.failure_reason = StageSuccess.FAILED, step.violation
        step.feedback = build_feedback(step.calls, decision_calls, failure_reason=step.violation)
    elif step.kind == "answer":
        step.success, reason, step.judge = judge_answer(ctx, state, step.decision.say)
        step.verification = int(step.success)
        if step.success is StageSuccess.FINISH:
            step.feedback = build_feedback([], infos="The answer was accepted.")
        else:
            step.failure_reason = reason
            step.feedback = build_feedback([], infos="", failure_reason=reason)
    else:
        batch = step.batch
        assert batch is not None
        step.timings.update(batch.timings)
        state.record.sim_steps += batch.sim_steps
        step.calls, step.notes = settle_batch(ctx, state, batch)
        if batch.error is not None:
            fail_with_error(
                state, batch.error_where, batch.error, batch.error_traceback
            )
            step.feedback = build_feedback(step.calls, decision_calls)
            return False
        failing = [c for c in step.calls if c.must_fail_stage]
        edit_violation = attribute_edit_violation(stage, step.calls)
        if failing:
            step.success = StageSuccess.FAILED
            step.failure_reason = failing[0].message or "A call failed the stage."
        elif edit_violation is not None:  # every stage kind: the seed's stage contract
            step.verification = -1
            step.success, step.failure_reason = StageSuccess.FAILED, edit_violation
        elif not stage.is_text_only():
            assert obs is not None
            start = time.perf_counter()
            step.verification = verify_stage(ctx, state, obs)
            step.verified_obs = slice_obs(obs, state.slot) if step.verification != 1 else None
            step.timings["stage_verify_s"] = time.perf_counter() - start
            step.success = StageSuccess(step.verification)
            if step.success is StageSuccess.FAILED:
                step.failure_reason = "The stage failed its verification."
        step.feedback = build_feedback(
            step.calls, decision_calls, failure_reason=step.failure_reason
        )
    return advance(ctx, state, step, stage)

def advance(ctx: EngineContext, state: SlotState, step: DecisionStep, stage: BaseTaskStage) -> bool:
    """Apply the step's stage outcome to the episode; True when a new stage was entered."""
    step.stage_state = stage.get_stage_state(state.effective_tool_calls, step.success)
    stage_record = state.record.stages[step.stage_index]
    stage_record.tool_calls = state.tool_calls
    stage_record.forgiven_tool_calls = state.forgiven_tool_calls
    # a failed stage has no budget score (unless it failed by exceeding its budget)
    failed = step.success is StageSuccess.FAILED and step.stage_state is not StageState.EXCEEDED
    stage_record.state = None if failed else step.stage_state.name
    stage_record.success = step.success.name
    state.feedback = step.feedback
    if step.success is StageSuccess.FAILED:
        end_episode(state, FAILED, (step.failure_reason or "The stage failed.")
                    + unmet_goals(stage, step.verified_obs))
    elif step.success is StageSuccess.FINISH:
        if step.stage_index == ctx.num_stages - 1:
            end_episode(state, SUCCESS, "Every stage was completed.")
        else:
            stage_boundary(ctx, state)
            note_stage_start(ctx, state)
            state.messages = stage_entry_messages(
                ctx, state, step.feedback, previous_was_action=not stage.is_text_only()
            )
            return True
    elif step.kind == "batch" and step.stage_state is StageState.EXCEEDED:
        note = failed_calls_note([c for s in state.record.steps for c in s.calls] + step.calls)
        end_episode(state, EXCEEDED, f"Stage {step.stage_index} reached its maximum of "
                    f"{stage.max_tool_calls} tool calls{note or '.'}"
                    + unmet_goals(stage, step.verified_obs))
    if not state.running or step.success is not StageSuccess.FINISH:
        state.messages = [feedback_message(step.feedback)]
    return False

def conclude(
    ctx: EngineContext, state: SlotState, step: DecisionStep, elapsed: float,
    world: object = UNREAD,
) -> StepOutcome:
    """Record the step in the episode and answer its ``StepOutcome`` (``world``: the slot's
    world after the step when already read)."""
    step.timings["total_s"] = elapsed
    state.record.engine_s += elapsed
    if not step.feedback:  # the step was cut short by a scenario exception
        step.feedback = state.feedback or build_feedback([], infos="")
    stage_record = state.record.stages[step.stage_index]
    if state.stage_index == step.stage_index:  # still in that stage: sync its counters
        stage_record.tool_calls = state.tool_calls
        stage_record.forgiven_tool_calls = state.forgiven_tool_calls
    record_world(state, ctx.sim, world)
    view = build_view(ctx, state)
    state.record.steps.append(
        StepRecord(
            step_index=state.step_index,
            stage_index=step.stage_index,
            inputs=step.inputs,
            decision=step.decision,
            calls=list(step.calls),
            stage_success=step.success.name,
            stage_state=step.stage_state.name,
            verification=step.verification,
            status=state.status,
            message=str(step.feedback.get("infos", "")),
            failure_reason=step.failure_reason,
            tool_calls=stage_record.tool_calls,
            forgiven_tool_calls=stage_record.forgiven_tool_calls,
            timings=dict(step.timings),
            judge=step.judge,
            notes=list(step.notes),
            error_descriptions=list(stage_record.error_descriptions),
        )
    )
    outcome = StepOutcome(
        slot=state.slot,
        step_index=state.step_index,
        stage_index=step.stage_index,
        calls=step.calls,
        stage_success=step.success,
        stage_state=step.stage_state,
        status=state.status,
        message=str(step.feedback.get("infos", "")),
        next_view=view,
        verification=step.verification,
        failure_reason=step.failure_reason or (state.record.reason if state.status == ERROR else None),
        tool_calls=stage_record.tool_calls,
        forgiven_tool_calls=stage_record.forgiven_tool_calls,
    )
    state.step_index += 1
    return outcome

def over_outcome(ctx: EngineContext, state: SlotState) -> StepOutcome:
    """The outcome of a decision sent to a slot whose episode is over."""
    message = f"The episode is over ({state.status}); reset the slot to start another."
    return StepOutcome(
        slot=state.slot,
        step_index=state.step_index,
        stage_index=state.stage_index,
        calls=[],
        stage_success=StageSuccess.ONGOING,
        stage_state=StageState.UNASSESSED,
        status=state.status,
        message=message,
        next_view=build_view(ctx, state),
        failure_reason=message,
    )

def end_episode(state: SlotState, status: str, reason: str) -> None:
    """End the slot's episode with ``status``."""
    state.status = status
    record = state.record
    record.status = status
    record.reason = reason
    record.ended_at = time.time()
    record.wall_s = record.ended_at - record.started_at
    record.attributes = copy.deepcopy(state.attributes)

def read_world(state: SlotState, sim: Simulator) -> JSONDict | None:
    """The slot's compact world now. A world hook that fails (e.g. ``get_magma_extra_state``
    reporting NaN) ends the episode with an error, puts the slot's reference world back (so
    that the other slots' batched reads work) and gives None."""
    try:
        return world_state(sim, state.slot)
    except Exception as exc:
        fail_with_error(state, "reading the world state (get_state_dict, get_magma_extra_state)",
                        exc)
    if state.reference is not None:
        try:
            sim.restore_slot(state.slot, state.reference)
        except Exception:  # noqa: S110 - the episode is already an error with its traceback
            pass
    return None


def rebuild_failed(sim: Simulator, states: list[SlotState | None],
                   outcomes: dict[int, StepOutcome]) -> None:
    """Put the reference world back into each slot whose episode this step ended with a
    scenario error: a world a faulty hook left behind must not reach the other slots'
    batched reads (the record already holds what the world was)."""
    for slot, outcome in outcomes.items():
        state = states[slot]
        if outcome.status != ERROR or state is None or state.reference is None:
            continue
        try:
            sim.restore_slot(slot, state.reference)
        except Exception:  # noqa: S112 - the episode is already an error with its traceback
            continue


def record_world(state: SlotState, sim: Simulator, world: object = UNREAD) -> None:
    """Append the slot's world (``world`` when already read, see :func:`read_world`)."""
    state.record.worlds.append(read_world(state, sim) if world is UNREAD else world)


def fail_with_error(
    state: SlotState, where: str, exc: BaseException, tb: str | None = None
) -> None:
    """End the slot's episode with status ``error``: the reason says what raised ``where``
    (a :class:`ScenarioFault` says itself where), the record keeps the traceback."""
    if not state.running:
        return
    if isinstance(exc, ScenarioFault):
        where, exc = exc.where, exc.error
    if isinstance(exc, JudgeReplyError):  # the judge answered nonsense: this episode's
        end_episode(state, JUDGE_ERROR, str(exc))
        return
    if isinstance(exc, JudgeError):  # an outage of the judge, not a scenario bug
        end_episode(state, JUDGE_UNAVAILABLE, str(exc))
        return
    end_episode(state, ERROR, f"{type(exc).__name__} while {where}: {exc}")
    state.record.traceback = tb or "".join(traceback.format_exception(exc))
    state.feedback = build_feedback(
        [], infos="", failure_reason="The episode stopped on an error in the scenario."
    )
    state.messages = [feedback_message(state.feedback)]
