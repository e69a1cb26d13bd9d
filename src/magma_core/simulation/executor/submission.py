"""One decision per listed slot, all slots' tool batches in the same simulator steps: the
step :meth:`~magma_core.simulation.executor.executor.Executor.submit` takes.

:func:`submit_decisions` classifies each slot's decision (``decision_steps``), runs the tool
batches together (``batch``), reads each batched slot's world before any stage boundary reads
all slots (so a world hook's fault ends only its own episode), settles and verifies each stage
(``verification``), samples the errors of stages just entered, and concludes each slot's
``StepOutcome``. With skills the skill step (``skill_steps``) runs instead. Scenario exceptions
end only their slot, with status ``error``; nothing here raises for a malformed decision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from magma_core.simulation.executor.batch import run_batches
from magma_core.simulation.executor.decision_steps import (
    UNREAD,
    DecisionStep,
    classify,
    conclude,
    fail_with_error,
    has_errors,
    over_outcome,
    read_world,
    rebuild_failed,
    settle,
)
from magma_core.simulation.executor.normalize import normalize_decision
from magma_core.simulation.executor.records import StepOutcome
from magma_core.simulation.executor.skill_steps import submit_with_skills
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.executor.verification import sample_stage_errors, settle_batch


def submit_decisions(ctx: EngineContext, slot_ctx: Sequence[EngineContext],
                     slots: list[SlotState | None], state_of: Callable[[int], SlotState],
                     decisions: Mapping[int, object]) -> dict[int, StepOutcome]:
    """Run ``decisions`` (slot → decision) on the engine ``ctx`` shared by every slot
    (simulator, motion, tools, robots); ``slot_ctx[slot]`` is each slot's task and stages,
    ``slots`` the slot states (a failed world is rebuilt in it), ``state_of`` checks a slot."""
    start = time.perf_counter()
    if ctx.skills is not None:
        return _submit_with_skills(ctx, slot_ctx, slots, state_of, decisions, start)
    outcomes: dict[int, StepOutcome] = {}
    steps: dict[int, DecisionStep] = {}
    batch_calls = {}
    for slot, raw in decisions.items():
        state = state_of(slot)
        if not state.running:
            outcomes[slot] = over_outcome(slot_ctx[slot], state)
            continue
        step = classify(slot_ctx[slot], state, normalize_decision(raw))
        steps[slot] = step
        if step.kind == "batch":
            batch_calls[slot] = step.decision.calls
    states = {slot: state_of(slot) for slot in steps}
    run = run_batches(ctx, states, batch_calls)
    batches = run.batches
    obs = run.obs if run.obs is not None or not batches else ctx.sim.observe()
    # Each batched slot's world, read before any stage boundary reads all slots: a world
    # hook's fault ends its own episode, not that of a slot entering a stage.
    worlds = {slot: read_world(states[slot], ctx.sim) for slot in batch_calls}
    entered: list[int] = []
    for slot, step in steps.items():
        step.batch = batches.get(slot)
        state = states[slot]
        if not state.running:  # its world hook failed: keep the calls, verify nothing
            step.calls, step.notes = settle_batch(slot_ctx[slot], state, step.batch)
            continue
        try:
            if settle(slot_ctx[slot], state, step, obs):
                entered.append(slot)
        except Exception as exc:  # scenario code (goal, log check, transition, judge)
            fail_with_error(state, f"verifying stage {step.stage_index}", exc)
    for slot in entered:
        worlds.pop(slot, None)  # its entry transition changed it: read again
    entered = [s for s in entered if has_errors(slot_ctx[s], states[s])]
    if entered:
        raw_obs = ctx.sim.observe()
        for slot in entered:
            state = states[slot]
            try:
                sample_stage_errors(slot_ctx[slot], state, raw_obs)
            except Exception as exc:
                fail_with_error(state, f"sampling errors of stage {state.stage_index}", exc)
    elapsed = time.perf_counter() - start
    for slot, step in steps.items():
        outcomes[slot] = conclude(slot_ctx[slot], states[slot], step, elapsed,
                                  worlds.get(slot, UNREAD))
    rebuild_failed(ctx.sim, slots, outcomes)
    return outcomes


def _submit_with_skills(ctx: EngineContext, slot_ctx: Sequence[EngineContext], slots: list[SlotState | None],
                        state_of: Callable[[int], SlotState], decisions: Mapping[int, object],
                        start: float) -> dict[int, StepOutcome]:
    outcomes: dict[int, StepOutcome] = {}
    states, normalized = {}, {}
    for slot, raw in decisions.items():
        state = state_of(slot)
        if not state.running:
            outcomes[slot] = over_outcome(slot_ctx[slot], state)
            continue
        states[slot], normalized[slot] = state, normalize_decision(raw)
    outcomes.update(
        submit_with_skills(ctx, states, normalized, start, slot_ctx)
    )
    rebuild_failed(ctx.sim, slots, {s: outcomes[s] for s in states})
    return outcomes
