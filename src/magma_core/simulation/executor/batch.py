"""Running tool batches: one decision's calls, all robots together, several slots at once.

For every slot of the batch, in this order: resolve each call's robot and build its
``ToolExecution`` (pre-execution error hooks included); run the motion of every slot in the
same simulator steps; verify on the fresh observation (post-verification hooks); apply the
results' state updates; protect the actors the batch was not allowed to move; write the
slot back. A planner error restores the slot to its pre-batch state and retries the whole
batch, at most ``MAX_PLANNER_RETRIES`` times; after that the slot stays restored.

Scenario exceptions (a tool, an error hook, a verifier, a bad state update) end only the
slot they happened in; they are caught here and reported in ``SlotBatch.error``.
"""

from __future__ import annotations

import copy
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field

import torch

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import (
    Observation,
    ToolBatchContext,
    ToolErrorFlag,
    ToolExecution,
    ToolResult,
)
from magma_core.simulation.data_structures.state_tree import StateTree
from magma_core.simulation.executor.motion import MotionReport
from magma_core.simulation.executor.normalize import NormalizedCall
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.state import (
    apply_env_state_updates,
    assign_slot,
    merge_allowed_moving_actors,
    restore_disallowed_actors,
)

MAX_PLANNER_RETRIES = 3


@dataclass
class PreparedCall:
    """One call of a batch: what the agent asked, the execution, and what came of it."""

    call: NormalizedCall
    robot: str | None
    execution: ToolExecution
    result: ToolResult | None = None
    planner_reason: str | None = None

    @property
    def runs(self) -> bool:
        """Whether the execution goes to motion and verification (not failed beforehand)."""
        return not self.execution.has_error()


@dataclass
class SlotBatch:
    """One slot's batch through all its attempts."""

    slot: int
    calls: list[NormalizedCall]
    prepared: list[PreparedCall] = field(default_factory=list)
    attempts: int = 0
    rolled_back: bool = False
    error: BaseException | None = None
    error_traceback: str | None = None
    error_where: str = ""
    sim_steps: int = 0
    timings: dict[str, float] = field(
        default_factory=lambda: {"prepare_s": 0.0, "motion_s": 0.0, "verify_s": 0.0}
    )

    def fail(self, where: str, exc: BaseException) -> None:
        self.error = exc
        self.error_where = where
        self.error_traceback = "".join(traceback.format_exception(exc))


def _failed_execution(reason: str, *, public: bool = False) -> ToolExecution:
    execution = ToolExecution(poses=[], verifier=None, reason_is_public=public)
    execution.fail(reason)
    return execution


def prepare_call(
    ctx: EngineContext,
    state: SlotState,
    call: NormalizedCall,
    raw_obs: dict[str, object],
    attributes: JSONDict,
    batch_context: ToolBatchContext,
) -> PreparedCall:
    """Resolve the robot and build the call's execution, with the stage's errors attached.

    Bad calls become failed executions; exceptions from scenario code propagate.
    """
    if call.error is not None:
        return PreparedCall(call, call.target_robot_name, _failed_execution(call.error))
    robot = call.target_robot_name
    if robot is None or robot == "":
        if len(ctx.robot_names) == 1:
            robot = ctx.robot_names[0]
        else:
            reason = (
                f"No robot given for {call.name}. Please name one of the known robots: "
                f"{', '.join(ctx.robot_names)}."
            )
            return PreparedCall(call, None, _failed_execution(reason, public=True))
    if robot not in ctx.robot_names:
        reason = f"Unknown robot {robot}. Please use only known robot names."
        return PreparedCall(call, robot, _failed_execution(reason, public=True))
    obs = Observation(
        selected_robot_name=robot,
        task_attributes=attributes,
        maniskill_obs=raw_obs,
        add_constants=ctx.task.tools_constant,
        tool_batch_context=batch_context,
    )
    execution = ctx.tools[state.slot].call_tool(call.name, obs, state.slot, call.arguments)
    execution.robot_idx = ctx.robot_names.index(robot)
    execution.set_execution_info(call.name, state.stage_index, state.active_errors)
    execution.apply_pre_exec_errors(state.error_args)
    return PreparedCall(call, robot, execution)


def _prepare(ctx: EngineContext, state: SlotState, batch: SlotBatch, raw_obs: dict) -> None:
    start = time.perf_counter()
    attributes = copy.deepcopy(state.attributes)
    batch_context = ToolBatchContext()
    prepared: list[PreparedCall] = []
    for call in batch.calls:
        try:
            prepared.append(prepare_call(ctx, state, call, raw_obs, attributes, batch_context))
        except Exception as exc:  # scenario code (a tool or a pre-execution hook) raised
            batch.fail(f"preparing the call to {call.name}", exc)
            break
    batch.prepared = prepared
    batch.timings["prepare_s"] += time.perf_counter() - start


def _verify(state: SlotState, batch: SlotBatch, raw_obs: dict) -> None:
    start = time.perf_counter()
    for pc in batch.prepared:
        if not pc.runs:
            continue
        try:
            pc.result = pc.execution.call_verifier(raw_obs, state.error_args)
        except Exception as exc:  # a verifier or a post-verification hook raised
            batch.fail(f"verifying the call to {pc.call.name}", exc)
            break
    batch.timings["verify_s"] += time.perf_counter() - start


def _write_back(
    state_tree: StateTree,
    pre_state: StateTree,
    state: SlotState,
    batch: SlotBatch,
) -> bool:
    """State updates then actor protection on ``state_tree``; True when the slot changed."""
    executed = [pc for pc in batch.prepared if pc.runs and pc.result is not None]
    changed = False
    for pc in executed:
        updates = pc.result.state_updates  # type: ignore[union-attr]
        if not updates:
            continue
        try:
            apply_env_state_updates(state_tree, state.slot, updates)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            batch.fail(f"applying the state updates of {pc.call.name}", exc)
            return changed
        changed = True
    allowed = merge_allowed_moving_actors(pc.execution.allowed_moving_actors for pc in executed)
    if executed and allowed is not None and _moved_disallowed(state_tree, pre_state, state.slot, allowed):
        restore_disallowed_actors(state_tree, pre_state, state.slot, allowed)
        changed = True
    return changed


def _moved_disallowed(
    state_tree: StateTree, pre_state: StateTree, slot: int, allowed: list[str]
) -> bool:
    """Whether an actor outside ``allowed`` differs from its pre-batch row in ``slot``."""
    actors, before = state_tree.get("actors", {}), pre_state.get("actors", {})
    for name, leaf in actors.items():
        if name in allowed:
            continue
        old = before.get(name)
        if not isinstance(old, torch.Tensor) or old.shape != leaf.shape:
            return True  # let restore_disallowed_actors decide (and warn)
        if not torch.equal(leaf[slot], old[slot]):
            return True
    return False


@dataclass
class BatchRun:
    """The batches of one ``submit``; ``obs`` is the current observation, or None when the
    simulator changed after the last one was taken."""

    batches: dict[int, SlotBatch]
    obs: dict[str, object] | None = None


def run_batches(
    ctx: EngineContext,
    states: Mapping[int, SlotState],
    calls: Mapping[int, list[NormalizedCall]],
) -> BatchRun:
    """Run each slot's calls as one batch, all slots in the same simulator steps."""
    batches = {slot: SlotBatch(slot, list(c)) for slot, c in calls.items()}
    run = BatchRun(batches)
    if not batches:
        return run
    pre_state = ctx.sim.get_state()
    active = sorted(batches)
    # Error hooks may bind arguments while preparing; an undone attempt must not use them up.
    pre_error_args = {slot: copy.deepcopy(states[slot].error_args) for slot in active}
    while active:
        run.obs = None
        raw_obs = ctx.sim.observe()
        for slot in active:
            batches[slot].attempts += 1
            _prepare(ctx, states[slot], batches[slot], raw_obs)
        active = [s for s in active if batches[s].error is None]
        running = {slot: [pc for pc in batches[slot].prepared if pc.runs] for slot in active}
        plans = {slot: [pc.execution for pc in running[slot]] for slot in active}
        moving = {s: p for s, p in plans.items() if any(e.has_motion() for e in p)}
        report = MotionReport()
        if moving:
            start = time.perf_counter()
            report = ctx.motion.run(moving)
            elapsed = time.perf_counter() - start
            for slot in moving:
                batches[slot].timings["motion_s"] += elapsed
        for slot in moving:
            batches[slot].sim_steps += report.steps_of(slot)
        failed = [s for s in active if report.failures.get(s)]
        succeeded = [s for s in active if s not in failed]
        for slot in failed:
            for index, reason in report.failures[slot].items():
                running[slot][index].planner_reason = reason or "The motion could not be planned."
        post_obs = ctx.sim.observe() if moving else raw_obs
        if succeeded:
            for slot in succeeded:
                _verify(states[slot], batches[slot], post_obs)
        write = [s for s in succeeded if batches[s].error is None]
        tree = ctx.sim.get_state() if (write or failed) else None
        dirty: list[int] = []
        for slot in write:
            if _write_back(tree, pre_state, states[slot], batches[slot]):  # type: ignore[arg-type]
                dirty.append(slot)
        for slot in failed:
            assign_slot(tree, slot, pre_state, source_slot=slot)  # type: ignore[arg-type]
            dirty.append(slot)
        if dirty:
            ctx.sim.set_state(tree, slots=dirty)
        elif succeeded:
            run.obs = post_obs
        retry = []
        for slot in failed:
            if batches[slot].attempts <= MAX_PLANNER_RETRIES:
                # The retry prepares the batch anew: its error hooks see the arguments they
                # saw the first time. After the last attempt they stay as reported.
                states[slot].error_args = copy.deepcopy(pre_error_args[slot])
                retry.append(slot)
            else:
                batches[slot].rolled_back = True
        active = retry
    return run


def call_failure_flag(pc: PreparedCall, rolled_back: bool) -> tuple[bool, ToolErrorFlag, str]:
    """The call's ``(ok, failure_flag, message)``.

    A failure an injected error took part in is INJECTION_ERROR; a motion that could not be
    planned is PLANNER_ERROR; any other failure (a bad call, or a verifier reporting that
    the call did not achieve its effect) is BAD_CALL.
    """
    execution = pc.execution
    if rolled_back:
        if pc.planner_reason is not None:
            return False, ToolErrorFlag.PLANNER_ERROR, pc.planner_reason
        if execution.has_error():  # refused before any motion: that is its own outcome
            flag = ToolErrorFlag.INJECTION_ERROR if execution.injection_applied else execution.failure_flag
            return False, flag, execution.reason
        return (
            False,
            ToolErrorFlag.PLANNER_ERROR,
            "Not executed: the batch was undone because another motion could not be planned.",
        )
    if execution.has_error():
        flag = ToolErrorFlag.INJECTION_ERROR if execution.injection_applied else execution.failure_flag
        return False, flag, execution.reason
    result = pc.result
    if result is None:  # verification was interrupted by a scenario exception
        return False, ToolErrorFlag.BAD_CALL, "Not verified."
    if result.ok:
        return True, ToolErrorFlag.NONE, result.reason
    flag = ToolErrorFlag.INJECTION_ERROR if execution.injection_applied else ToolErrorFlag.BAD_CALL
    return False, flag, result.reason
