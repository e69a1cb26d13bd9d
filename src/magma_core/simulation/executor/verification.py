"""Stage verification and stage boundaries.

After a batch: its calls are settled (counters, forgiven calls, logs, attribute edits) and
the stage is verified with ``verify_completion``. A text-only answer is validated (SAY_ONLY
the stage's scorer, or the judge). At a FINISH with a next stage: ``reset_at_end`` restores the slot's
reference state, the next stage's entry transition is applied to that slot only, and the
next stage's errors are sampled with the slot's seeded RNG.
"""

from __future__ import annotations

import copy

import torch

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import (
    Log,
    Observation,
    StageSuccess,
    ToolErrorFlag,
)
from magma_core.simulation.executor.batch import SlotBatch, call_failure_flag
from magma_core.simulation.executor.records import CallOutcome, jsonable
from magma_core.simulation.executor.slots import (
    MAX_FORGIVEN_TOOL_CALLS_PER_STAGE,
    EngineContext,
    SlotState,
)
from magma_core.simulation.executor.state_checks import (
    ScenarioFault,
    check_returned_state,
    layout_of,
)
from magma_core.simulation.stage import BaseTaskStage, TextOnlyValidationMode

TEXT_ONLY_TOOL_FAILURE = (
    "The answer called a tool, but this text-only stage requires a user-facing response "
    "and does not allow tool calls."
)
EMPTY_ANSWER_FAILURE = "The text-only answer is empty."
NON_ADDITIVE_EDIT_FAILURE = (
    "{tool} returned an attribute edit ({action} {value!r} to {name!r}), but this stage is not "
    "additive (additive_stage=False): attribute edits fail its verification."
)
MARKUP_ANSWER_FAILURE = (
    "The answer was rejected before judging because a text-only stage must not contain "
    "structured tool or markup-like content."
)


class JudgeError(RuntimeError):
    """The judge could not give a verdict (the episode ends with status ``judge_unavailable``)."""


class JudgeReplyError(JudgeError):
    """The judge answered, but no verdict could be read from its replies: a judge error on
    this episode (status ``judge_error``), and the run goes on."""


def slice_obs(obs: dict[str, object], slot: int) -> dict[str, object]:
    """The observation of one slot, batch dimension kept (``[1, ...]`` leaves)."""
    if not isinstance(obs, dict):  # a scenario's observation of another kind, sliced as it is
        return _slice(obs, slot)  # type: ignore[return-value]
    return {k: _slice(v, slot) for k, v in obs.items()}


def _slice(value: object, slot: int) -> object:
    if isinstance(value, torch.Tensor):
        return value[slot : slot + 1] if value.ndim >= 1 else value
    if isinstance(value, dict):
        return {k: _slice(v, slot) for k, v in value.items()}
    return value


def apply_attribute_edit(attributes: JSONDict, log: Log) -> str | None:
    """Apply an ADD/REMOVE log to ``attributes`` in place; a note when it could not apply."""
    name, value = log.content
    current = attributes.get(name)
    if log.action == "ADD":
        if current is None:
            attributes[name] = [value]
            return None
        if not isinstance(current, list):
            return f"cannot ADD to attribute {name!r}: it is not a list"
        if value not in current:
            current.append(value)
        return None
    if not isinstance(current, list) or value not in current:
        return f"cannot REMOVE {value!r} from attribute {name!r}: not present"
    current.remove(value)
    return None


def settle_batch(ctx: EngineContext, state: SlotState, batch: SlotBatch) -> tuple[list[CallOutcome], list[str]]:
    """Turn a finished batch into call outcomes; update counters, logs and attributes.

    Returns the outcomes and notes for the record (e.g. an attribute edit that did not apply).
    """
    stage = ctx.stages[state.stage_index]
    additive = bool(stage.global_parameters.additive_stage)
    outcomes: list[CallOutcome] = []
    notes: list[str] = []
    forgiven = 0
    for pc in batch.prepared:
        ok, flag, message = call_failure_flag(pc, batch.rolled_back)
        execution = pc.execution
        log = None
        updates: list[JSONDict] = []
        context: JSONDict = {}
        if pc.result is not None and not batch.rolled_back:
            context = dict(pc.result.context or {})
            if pc.result.logs is not None:
                state.logs.append(pc.result.logs)
                state.record.logs.append(pc.result.logs.to_dict())
                log = pc.result.logs.to_dict()
                if pc.result.logs.is_attribute_edit() and additive:
                    note = apply_attribute_edit(state.attributes, pc.result.logs)
                    if note:
                        notes.append(note)
            updates = [
                {"path": list(u.path), "value": jsonable(u.value)} for u in pc.result.state_updates
            ]
        injected = bool(execution.injection_applied)
        is_forgiven = (  # the system's failures, not the agent's (planner: no IK solution)
            not ok
            and flag in (ToolErrorFlag.INJECTION_ERROR, ToolErrorFlag.PLANNER_ERROR)
            and state.forgiven_tool_calls + forgiven < MAX_FORGIVEN_TOOL_CALLS_PER_STAGE
        )
        forgiven += int(is_forgiven)
        outcomes.append(
            CallOutcome(
                robot=pc.robot,
                tool=pc.call.name,
                arguments=pc.call.arguments if isinstance(pc.call.arguments, dict) else {},
                ok=ok,
                message=message or "",
                failure_flag=flag,
                message_is_public=bool(execution.reason_is_public) and not ok,
                injected=injected,
                forgiven=is_forgiven,
                must_fail_stage=bool(execution.must_fail_stage),
                log=log,
                state_updates=updates,
                context=context,
                attempts=batch.attempts,
            )
        )
    state.tool_calls += len(batch.prepared)
    state.forgiven_tool_calls += forgiven
    if state.error_args:  # lazily bound errors get their arguments during the batch
        state.record.stages[state.stage_index].active_errors = jsonable(state.error_args)
    return outcomes, notes


def attribute_edit_violation(stage: BaseTaskStage, outcomes: list[CallOutcome]) -> str | None:
    """Why a batch fails a non-additive stage of any kind (action, text-only with tools,
    custom ``verify_completion``): a call returned an ADD/REMOVE log. None when allowed."""
    if stage.global_parameters.additive_stage:
        return None
    for outcome in outcomes:
        log = outcome.log or {}
        if log.get("action") in ("ADD", "REMOVE"):
            content = log.get("content")
            name, value = (content if isinstance(content, (list, tuple)) and len(content) == 2
                           else (content, None))
            return NON_ADDITIVE_EDIT_FAILURE.format(tool=outcome.tool, action=log["action"],
                                                    value=value, name=name)
    return None


def verify_stage(ctx: EngineContext, state: SlotState, obs: dict[str, object]) -> int:
    """The current action stage's score for this slot: 1 done, 0 ongoing, -1 failed."""
    stage = ctx.stages[state.stage_index]
    check_goals_on_batch(ctx, stage, obs)
    scores = stage.verify_completion(slice_obs(obs, state.slot), [state.stage_logs()], [list(state.logs)])
    score = int(torch.as_tensor(scores).reshape(-1)[0])
    if score not in (-1, 0, 1):
        raise ValueError(f"{type(stage).__name__}.verify_completion returned {score}, expected -1, 0 or 1")
    return score


def check_goals_on_batch(ctx: EngineContext, stage: BaseTaskStage, obs: dict[str, object]) -> None:
    """With several slots: ``stage``'s goals on the whole batch's observation must return one
    score per slot (``ValueError`` naming the goal otherwise, for every slot of the stage).

    A slot is verified on its own one-row slice, where a goal that ignores the batch (one
    score whatever the observation) looks right; on the batch it shows. Checked the first
    time the stage is verified, remembered after. A goal that raises here is left to the
    slot's own verification, which reports it."""
    num_slots = ctx.sim.num_slots
    if num_slots < 2 or not stage.goals:
        return
    problem = ctx.goal_batch_checks.get(stage)
    if problem is None:
        problem = ctx.goal_batch_checks[stage] = _goal_batch_problem(stage, obs, num_slots)
    if problem:
        raise ValueError(problem)


def _goal_batch_problem(stage: BaseTaskStage, obs: dict[str, object], num_slots: int) -> str:
    for goal in stage.goals:
        try:
            score = goal.verify(obs)
        except Exception:  # noqa: S112 - the slot's own verification reports it
            continue
        shape = tuple(score.shape) if isinstance(score, torch.Tensor) else None
        if shape is not None and shape != (num_slots,):
            return (f"{goal.get_name()}.verify returned a tensor of shape {shape} for an "
                    f"observation of {num_slots} slots; expected an int tensor of length "
                    f"{num_slots} with -1/0/1, one per row of the observation")
    return ""


def judge_answer(
    ctx: EngineContext, state: SlotState, answer: str
) -> tuple[StageSuccess, str, JSONDict | None]:
    """Validate a text-only answer: ``(FINISH | FAILED, reason, judge record)``.

    An empty answer, or one starting with ``{`` or ``<`` (markup, not a message to the user),
    fails before any judging. SAY_ONLY accepts any other message; JUDGE asks the executor's judge with the stage's
    verification prompt as the rule and the last user instruction as the question. A
    verdict carrying an ``error`` (no verdict obtained) raises ``JudgeError``.
    """
    stage = ctx.stages[state.stage_index]
    if not answer.strip():
        return StageSuccess.FAILED, EMPTY_ANSWER_FAILURE, None
    if answer.lstrip().startswith(("{", "<")):  # e.g. '{"say": "done"}': not a user message
        return StageSuccess.FAILED, MARKUP_ANSWER_FAILURE, None
    params = stage.global_parameters
    question = stage.stage_input.instruction.get_content() or state.last_user_instruction
    if stage.scorer is not None:  # a rule-based scorer decides, no judge model
        verdict = stage.scorer.score(answer)
        record = {"scorer": stage.scorer.describe(), "question": question, "ok": verdict.ok,
                  "reason": verdict.reason, "attempts": verdict.attempts, "usage": {},
                  "latency_s": 0.0}
        if verdict.ok:
            return StageSuccess.FINISH, "", record
        return StageSuccess.FAILED, verdict.reason or "The scorer rejected the answer.", record
    if params.text_only_validation is TextOnlyValidationMode.SAY_ONLY:
        return StageSuccess.FINISH, "", None
    if ctx.judge is None:  # the executor refuses such tasks; kept as a guard
        raise RuntimeError("This stage needs a judge and the executor has none")
    verdict = ctx.judge.judge(params.verification_prompt, question, answer)
    if verdict.error:
        # No verdict could be obtained: neither a pass nor the agent's failure.
        if verdict.unparsable:
            raise JudgeReplyError(f"the judge's reply could not be read as a verdict "
                                  f"({verdict.error}); its last reply: {verdict.raw_output[:300]!r}")
        raise JudgeError(f"the judge gave no verdict: {verdict.error}")
    ok, reason = bool(verdict.ok), str(verdict.reason or "")
    record = {"rule": params.verification_prompt, "question": question, "ok": ok, "reason": reason,
              "attempts": verdict.attempts, "usage": jsonable(verdict.usage),
              "latency_s": verdict.latency_s}
    if ok:
        return StageSuccess.FINISH, "", record
    return StageSuccess.FAILED, reason or "The judge rejected the text-only answer.", record


def sample_stage_errors(ctx: EngineContext, state: SlotState, raw_obs: dict[str, object]) -> None:
    """Draw the current stage's active errors with the slot's RNG and bind their arguments
    (or take the stage's ``active_error_arguments_override`` as they are).

    ``initialize`` may return None to bind lazily (at the first compatible call).
    """
    stage = ctx.stages[state.stage_index]
    params = stage.error_parameters
    record = state.record.stages[state.stage_index]
    if not params.possible_errors:
        state.active_errors, state.error_args = [], {}
        return
    override = stage.active_error_arguments_override
    if override is not None:  # materialised: every possible error, with these arguments
        state.active_errors = list(params.possible_errors)
        state.error_args = copy.deepcopy(override)
    else:
        chosen = params.sample(state.rng)
        obs = Observation(
            selected_robot_name=ctx.robot_names[0],
            task_attributes=copy.deepcopy(state.attributes),
            maniskill_obs=raw_obs,
            add_constants=ctx.task.tools_constant,
        )
        state.active_errors = list(chosen)
        state.error_args = {error.get_name(): error.initialize(obs, state.slot) for error in chosen}
    chosen = state.active_errors
    record.active_errors = jsonable(state.error_args)
    record.error_descriptions = [
        text
        for error in chosen
        if (text := error.get_description(state.error_args[error.get_name()]))
    ]


def stage_boundary(ctx: EngineContext, state: SlotState) -> None:
    """Leave the current (finished, not last) stage and enter the next one in this slot.

    ``reset_at_end`` restores the reference snapshot; the next stage's entry transition is
    applied to this slot only (its returned state is used). Errors are sampled by the caller.
    A fault of either raises :class:`ScenarioFault` naming the stage and the hook.
    """
    finished = ctx.stages[state.stage_index]
    if finished.global_parameters.reset_at_end:
        try:
            ctx.sim.restore_slot(state.slot, state.reference)
        except Exception as exc:  # the world's set_magma_extra_state hook, typically
            raise ScenarioFault(f"restoring the reference state at the end of stage "
                                f"{state.stage_index} (reset_at_end)", exc) from exc
    state.enter_stage(state.stage_index + 1)
    apply_entry_transition(ctx, state)


def apply_entry_transition(ctx: EngineContext, state: SlotState) -> None:
    """Apply the current stage's ``build_init_state`` to this slot (no-op without a transition).

    The state it returns must keep the world's layout (shapes, dtype kinds) and be finite in
    this slot's row; otherwise, or when it raises, :class:`ScenarioFault` names the stage."""
    stage = ctx.stages[state.stage_index]
    overridden = type(stage).build_init_state is not BaseTaskStage.build_init_state
    if stage.entry_transition is None and not overridden:
        return
    index, name = state.stage_index, type(stage).__name__
    try:
        tree = ctx.sim.get_state()
    except Exception as exc:  # the world's get_magma_extra_state, typically
        raise ScenarioFault(f"reading the world state for the entry transition of stage {index} "
                            "(get_state_dict, get_magma_extra_state)", exc) from exc
    try:
        layout = layout_of(tree)
        new_tree = stage.build_init_state(tree, torch.tensor([state.slot], dtype=torch.long))
        if new_tree is not None:
            check_returned_state(new_tree, layout, state.slot,
                                 f"the entry transition of stage {index}")
        ctx.sim.set_state(tree if new_tree is None else new_tree, slots=[state.slot])
    except Exception as exc:
        raise ScenarioFault(f"applying the entry transition of stage {index} ({name})",
                            exc) from exc
