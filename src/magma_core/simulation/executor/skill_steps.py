"""Skills at run time, the steps: ``Executor.submit`` when the task runs with skills.

One agent answer may run several tool batches ("rounds"): each running skill gives one call
for its robot per round, all robots and all slots of the submit in the same simulator steps;
each result goes back to its skill. Every round is verified and counted against the stage's
budget like any batch. The rounds stop, and the agent is consulted, when a skill finishes
(its message is the feedback), the episode ends, or a stage is entered that is not an action
stage continuing the same request: then the remaining work is *suspended* and the new input
is shown (an interruption). On the next answer (see ``skill_admission``): cancels cancel;
calls on other robots, an empty answer or a plain message resume the suspended work (a
message in an action stage answers the user and the work goes on). If resumed work fails
the stage, the suspended work is put back, so that a retry from a snapshot finds it again.
``robot_statuses`` in the attributes says ``FREE`` or ``RUNNING name(args)`` per robot.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from magma_core.simulation.data_structures import StageSuccess, ToolErrorFlag
from magma_core.simulation.executor.batch import run_batches
from magma_core.simulation.executor.decision_steps import (
    DecisionStep,
    advance,
    classify,
    conclude,
    fail_with_error,
    has_errors,
    settle,
)
from magma_core.simulation.executor.normalize import NormalizedCall, NormalizedDecision
from magma_core.simulation.executor.records import FAILED, CallOutcome, StepOutcome
from magma_core.simulation.executor.skill_admission import admit
from magma_core.simulation.executor.skill_state import RunningSkill, SkillSlotState
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.executor.verification import sample_stage_errors, verify_stage
from magma_core.simulation.executor.views import (
    build_feedback,
    feedback_message,
    stage_entry_messages,
)
from magma_core.simulation.skills import CallTick, MessTick, RobotToolStatus

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.slots import EngineContext

ROBOT_STATUSES = "robot_statuses"


@dataclass
class SkillStep:
    """One slot's answer through its rounds: ``main`` is the step recorded for the answer."""

    main: DecisionStep
    active: bool = False
    entered: bool = False
    control: list[CallOutcome] = field(default_factory=list)
    finished: list[CallOutcome] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    rounds: int = 0


def refresh_statuses(ctx: EngineContext, state: SlotState) -> None:
    """Write ``robot_statuses`` into the slot's attributes."""
    skills = state.skills if state.skills is not None else SkillSlotState()
    state.attributes[ROBOT_STATUSES] = skills.statuses(ctx.robot_names)


def _continues_request(ctx: EngineContext, state: SlotState) -> bool:
    """Whether the current stage is an action stage with no new instruction."""
    stage = ctx.stages[state.stage_index]
    return not stage.is_text_only() and stage.stage_input.instruction.is_empty()


def _admit(ctx: EngineContext, state: SlotState, decision: NormalizedDecision) -> SkillStep:
    """Classify the answer; apply cancels and start skills; decide whether rounds run."""
    skills: SkillSlotState = state.skills
    stage = ctx.stages[state.stage_index]
    if decision.error is not None or stage.is_text_only():
        step = SkillStep(classify(ctx, state, decision))
        if step.main.kind == "batch":  # tools allowed before a text answer: run them as calls
            step.main.kind = "skills"
            return _admit_calls(ctx, state, decision, step)
        return step
    step = SkillStep(DecisionStep(state.slot, decision, state.stage_index, list(state.messages)))
    if not decision.calls:
        if skills.has_work():
            step.main.kind = "skills"
            skills.resume()
            step.active = True
        else:
            step.main.kind = "no_action"
        return step
    step.main.kind = "skills"
    return _admit_calls(ctx, state, decision, step)


def _admit_calls(
    ctx: EngineContext, state: SlotState, decision: NormalizedDecision, step: SkillStep
) -> SkillStep:
    skills: SkillSlotState = state.skills
    admission = admit(ctx.skills, skills, decision.calls, ctx.robot_names)
    if admission.refused:
        step.control = admission.refused
        state.tool_calls += len(admission.refused)
        return step
    step.control = admission.cancelled
    for outcome in admission.cancelled:
        skills.running.pop(outcome.robot, None)
        skills.suspended.pop(outcome.robot, None)
    if admission.start:
        skills.resume()
        for work in admission.start:
            skills.running[work.robot] = work
    step.active = bool(admission.start)
    return step


def _next_calls(skills: SkillSlotState, step: SkillStep) -> list[NormalizedCall]:
    """Start or replay each running skill: its next call, or its final message."""
    calls = []
    for robot, work in list(skills.running.items()):
        if work.pending is None:
            tick = work.skill.start() if not work.started else None
            work.started = True
            if tick is None:
                continue
            if isinstance(tick, MessTick):
                _finish(skills, work, tick, step)
                continue
            work.pending = _check_tick(work, tick)
        calls.append(NormalizedCall(work.pending.tool_name, dict(work.pending.arguments), robot))
    return calls


def _check_tick(work: RunningSkill, tick: object) -> CallTick:
    if not isinstance(tick, CallTick):
        raise TypeError(f"skill {work.name} returned {type(tick).__name__}, expected a tick")
    return tick


def _finish(skills: SkillSlotState, work: RunningSkill, tick: MessTick, step: SkillStep) -> None:
    skills.running.pop(work.robot, None)
    step.finished.append(
        CallOutcome(
            robot=work.robot,
            tool=work.name,
            arguments=dict(work.arguments),
            ok=bool(tick.result),
            message=str(tick.message),
            failure_flag=ToolErrorFlag(tick.error_flag),
            message_is_public=True,
        )
    )


def _feed_results(skills: SkillSlotState, calls: list[CallOutcome], step: SkillStep) -> None:
    """Give each robot's call result to its skill."""
    for outcome in calls:
        work = skills.running.get(outcome.robot or "")
        if work is None or work.pending is None:
            continue
        status = RobotToolStatus(outcome.tool, outcome.ok, outcome.message, outcome.failure_flag)
        work.pending = None
        tick = work.skill.tick(status)
        if isinstance(tick, MessTick):
            _finish(skills, work, tick, step)
        else:
            work.pending = _check_tick(work, tick)


def _merge(step: SkillStep, round_step: DecisionStep) -> None:
    main = step.main
    main.calls.extend(round_step.calls)
    main.notes.extend(round_step.notes)
    for key, value in round_step.timings.items():
        main.timings[key] = main.timings.get(key, 0.0) + value
    if round_step.stage_index == main.stage_index:
        main.success = round_step.success
        main.stage_state = round_step.stage_state
        main.verification = round_step.verification
        main.failure_reason = round_step.failure_reason
        main.judge = round_step.judge


def _after_round(ctx: EngineContext, state: SlotState, step: SkillStep, entered: bool) -> None:
    """Decide whether the slot's rounds go on (``step.active``)."""
    skills: SkillSlotState = state.skills
    step.entered = step.entered or entered
    if state.running and entered and skills.running and not _continues_request(ctx, state):
        step.interrupted = [w.label() for w in skills.running.values()]
        skills.suspend()
    step.active = bool(state.running and not step.finished and skills.running)


def _run_rounds(
    ctx: EngineContext, states: dict[int, SlotState], steps: dict[int, SkillStep],
    slot_ctx: EngineContext,
) -> None:
    while True:
        calls: dict[int, list[NormalizedCall]] = {}
        for slot, step in steps.items():
            if not step.active:
                continue
            try:
                slot_calls = _next_calls(states[slot].skills, step)
            except Exception as exc:  # a skill's own code
                fail_with_error(states[slot], "starting a skill", exc)
                step.active = False
                continue
            if step.finished or not slot_calls:
                step.active = False
                continue
            calls[slot] = slot_calls
        if not calls:
            return
        run = run_batches(ctx, {s: states[s] for s in calls}, calls)
        obs = run.obs if run.obs is not None else ctx.sim.observe()
        entered_errors = []
        for slot in calls:
            state, step, sctx = states[slot], steps[slot], slot_ctx[slot]
            step.rounds += 1
            round_step = DecisionStep(
                slot, NormalizedDecision(calls=calls[slot]), state.stage_index, [], kind="batch"
            )
            round_step.batch = run.batches[slot]
            entered = False
            try:
                entered = settle(sctx, state, round_step, obs)
                _merge(step, round_step)
                _feed_results(state.skills, round_step.calls, step)
            except Exception as exc:
                fail_with_error(state, f"running a skill in stage {round_step.stage_index}", exc)
            _after_round(sctx, state, step, entered)
            if entered and has_errors(sctx, state):
                entered_errors.append(slot)
        if entered_errors:
            raw_obs = ctx.sim.observe()
            for slot in entered_errors:
                try:
                    sample_stage_errors(slot_ctx[slot], states[slot], raw_obs)
                except Exception as exc:
                    fail_with_error(states[slot], "sampling stage errors", exc)


def _settle_without_rounds(ctx: EngineContext, state: SlotState, step: SkillStep, obs: dict[str, object]) -> bool:
    """The outcome of an answer that ran no tool: refused calls, cancels, or an answer."""
    main = step.main
    if main.kind != "skills":
        return settle(ctx, state, main, obs)
    stage = ctx.stages[main.stage_index]
    main.calls = list(step.control)
    if not step.control or any(not c.ok for c in step.control) or stage.is_text_only():
        main.kind = "batch"  # refused calls count against the budget
        main.feedback = build_feedback(step.control, [c.to_dict() for c in main.decision.calls])
        return advance(ctx, state, main, stage)
    main.verification = verify_stage(ctx, state, obs)  # only cancels: is the stage done?
    main.success = StageSuccess(main.verification)
    if main.success is StageSuccess.FAILED:
        main.failure_reason = "The stage failed its verification."
    main.feedback = build_feedback(step.control, [c.to_dict() for c in main.decision.calls])
    return advance(ctx, state, main, stage)


def _final_feedback(ctx: EngineContext, state: SlotState, step: SkillStep) -> None:
    """The agent's feedback: refused/cancelled calls, finished skills, interrupted work."""
    main = step.main
    lines = [*step.control, *step.finished]
    decision_calls = [c.to_dict() for c in main.decision.calls]
    infos = None
    if step.interrupted:
        infos = "\n".join(
            [line for c in lines if (line := c.to_line())]
            + [f"{label} is suspended: a new instruction arrived." for label in step.interrupted]
        )
    main.feedback = build_feedback(lines, decision_calls, infos=infos,
                                   failure_reason=main.failure_reason)
    state.feedback = main.feedback
    if state.running and step.entered:
        state.messages = stage_entry_messages(ctx, state, main.feedback, previous_was_action=True)
    else:
        state.messages = [feedback_message(main.feedback)]


def submit_with_skills(
    ctx: EngineContext, states: dict[int, SlotState], decisions: dict[int, NormalizedDecision],
    elapsed_start: float, slot_ctx: EngineContext | None = None,
) -> dict[int, StepOutcome]:
    """``Executor.submit`` with skills on (see the module docstring). ``ctx`` is shared by
    every slot (simulator, tools, robots); ``slot_ctx[slot]`` is each slot's task and stages
    (default: ``ctx``)."""
    if slot_ctx is None:
        slot_ctx = {slot: ctx for slot in states}
    shared = ctx
    steps: dict[int, SkillStep] = {}
    for slot, decision in decisions.items():
        state = states[slot]
        state.skills.before_resume = None
        try:
            steps[slot] = _admit(slot_ctx[slot], state, decision)
        except Exception as exc:  # a skill's constructor (scenario code)
            steps[slot] = SkillStep(
                DecisionStep(slot, decision, state.stage_index, list(state.messages), kind="error")
            )
            fail_with_error(state, "starting a skill", exc)
    quiet = [s for s, st in steps.items() if not st.active]
    obs = shared.sim.observe() if quiet else None
    for slot in quiet:
        state, step = states[slot], steps[slot]
        if not state.running:
            continue
        try:
            entered = _settle_without_rounds(slot_ctx[slot], state, step, obs)
        except Exception as exc:
            fail_with_error(state, f"verifying stage {step.main.stage_index}", exc)
            continue
        step.entered = entered
        if entered and state.running and state.skills.has_work() and _continues_request(slot_ctx[slot], state):
            state.skills.resume()  # e.g. an answered question; the request goes on
            step.active = True
    if any(st.active for st in steps.values()):
        _run_rounds(shared, states, steps, slot_ctx)
    elapsed = time.perf_counter() - elapsed_start
    outcomes = {}
    for slot, step in steps.items():
        state = states[slot]
        skills: SkillSlotState = state.skills
        if step.rounds or step.control or step.finished or step.interrupted:
            _final_feedback(slot_ctx[slot], state, step)
        if not state.running:
            restore = skills.before_resume if state.status == FAILED else None
            skills.clear()
            if restore is not None:  # resumed work failed: put the suspended work back
                skills.running, skills.suspended = restore.running, restore.suspended
        refresh_statuses(slot_ctx[slot], state)
        outcomes[slot] = conclude(slot_ctx[slot], state, step.main, elapsed)
    return outcomes
