"""``Executor``: THE execution engine. Every front end (tool tester, ``magma run``, benchmark,
generation) drives a task through it.

One executor runs one task in N slots of one simulator batch. Each slot runs an episode:
``agent_view(slot)`` says what the agent sees, ``submit({slot: decision})`` runs the
decisions of several slots in the same simulator steps and returns each slot's
``StepOutcome``, ``record(slot)`` is the episode's full record::

    executor = Executor(task, num_slots=2, seed=7)
    while not all(executor.agent_view(s).episode_over for s in range(2)):
        running = [s for s in range(2) if not executor.agent_view(s).episode_over]
        outcomes = executor.submit({s: agent.decide(executor.agent_view(s)) for s in running})
    executor.record(0).to_dict()
"""

from __future__ import annotations

import copy
import random
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from magma_core.simulation.data_structures import DecisionError, StageState, StageSuccess
from magma_core.simulation.executor.batch import SlotBatch, run_batches
from magma_core.simulation.executor.decisions import NormalizedDecision, normalize_decision
from magma_core.simulation.executor.records import (
    ERROR,
    EXCEEDED,
    FAILED,
    JUDGE_UNAVAILABLE,
    RUNNING,
    SUCCESS,
    AgentView,
    CallOutcome,
    EpisodeRecord,
    StageRecord,
    StepOutcome,
    StepRecord,
)
from magma_core.simulation.executor.slots import EngineContext, Judge, SlotState
from magma_core.simulation.executor.task_check import stages_to_run
from magma_core.simulation.executor.verification import (
    TEXT_ONLY_TOOL_FAILURE,
    JudgeError,
    apply_entry_transition,
    judge_answer,
    sample_stage_errors,
    settle_batch,
    stage_boundary,
    verify_stage,
)
from magma_core.simulation.executor.views import (
    build_feedback,
    build_view,
    feedback_message,
    stage_entry_messages,
)
from magma_core.simulation.tasks import BaseTask

SeedArg = int | Sequence[int] | None


@dataclass
class _Step:
    """Working data of one decision in one slot during ``submit``."""

    slot: int
    decision: NormalizedDecision
    stage_index: int
    inputs: list[dict[str, Any]]
    kind: str = ""
    violation: str = ""
    calls: list[CallOutcome] = field(default_factory=list)
    success: StageSuccess = StageSuccess.ONGOING
    stage_state: StageState = StageState.OPTIMAL
    verification: int | None = None
    feedback: dict[str, Any] = field(default_factory=dict)
    failure_reason: str | None = None
    judge: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    batch: SlotBatch | None = None


class Executor:
    """Runs ``task`` in ``num_slots`` slots (see the module docstring).

    Args:
        task: a ``BaseTask``; validated, and its answer flags materialised into completion
            stages (the task itself is never modified).
        num_slots: N, the slots that run episodes side by side in the same simulator steps.
        seed: base seed; ``reset()`` starts slot i with ``seed + i``.
        judge: validates answers of JUDGE text-only stages (``judge(rule, question,
            answer)`` returning an object with ``ok`` or ``passed``, and ``reason``).
            Required when the task has such stages.
        backend: simulator backend, ``"auto"``, ``"cpu"`` or ``"gpu"``.
        env_options: ``gym.make`` options over the task's own ``env_options``.
        sim: an already-built ``SimBatch``-like object to run on (tests, stand-ins).
        motion: the motion driver (default: the simulation layer's, on ``sim``).
    """

    def __init__(
        self,
        task: BaseTask,
        num_slots: int = 1,
        *,
        seed: int = 0,
        judge: Judge | None = None,
        backend: str = "auto",
        env_options: Mapping[str, Any] | None = None,
        sim: Any = None,
        motion: Any = None,
    ) -> None:
        if not isinstance(task, BaseTask):
            raise TypeError(f"Executor needs a BaseTask, got {type(task).__name__}")
        if not isinstance(num_slots, int) or isinstance(num_slots, bool) or num_slots < 1:
            raise ValueError(f"num_slots must be an int >= 1, got {num_slots!r}")
        stages = stages_to_run(task, judge)
        self.task = task
        self.num_slots = num_slots
        self.seed = int(seed)
        owns_sim = sim is None
        if sim is None:
            from magma_core.simulation.envs import SimBatch

            sim = SimBatch(
                task.maniskill_env_id,
                num_slots,
                seed=self.seed,
                env_options={**task.initialization_parameters.env_options, **(env_options or {})},
                reset_options=task.initialization_parameters.reset_options,
                backend=backend,
            )
        self._owns_sim = owns_sim
        try:
            if getattr(sim, "num_slots", num_slots) != num_slots:
                raise ValueError(f"sim has {sim.num_slots} slots, executor wants {num_slots}")
            if motion is None:
                from magma_core.simulation.executor.motion import default_motion

                motion = default_motion(sim)
            robot_names = self._robot_names(task, sim)
            # One tool instance per slot, bound to that slot's robots: on CPU every slot is
            # its own simulator, so ``get_agent`` must answer with the slot's own agent.
            tools = [
                _bound_tools(task.Tools_cls, robot_names, sim, slot) for slot in range(num_slots)
            ]
            self._ctx = EngineContext(
                task=task,
                stages=stages,
                sim=sim,
                motion=motion,
                tools=tools,
                robot_names=robot_names,
                tool_descriptions=task.Tools_cls.get_api_description(),
                judge=judge,
            )
            self._slots: list[SlotState | None] = [None] * num_slots
            self.reset()
        except BaseException:
            if owns_sim:
                sim.close()
            raise

    # -- construction helpers ----------------------------------------------------------------
    @staticmethod
    def _robot_names(task: BaseTask, sim: Any) -> list[str]:
        sim_names = list(getattr(sim, "robot_names", []) or ["robot"])
        names = task.initialization_parameters.resolve_agent_names(sim_names, task.name)
        known = task.situation_init.attributes.get("known_robots")
        if known is not None and list(known) != list(names):
            raise ValueError(
                f"Task {task.name!r}: attribute known_robots={known!r} differs from the robot "
                f"names {names!r}"
            )
        return list(names)

    # -- public properties -------------------------------------------------------------------
    @property
    def stages(self) -> list[Any]:
        """The stages as run (completion stages materialised)."""
        return list(self._ctx.stages)

    @property
    def num_stages(self) -> int:
        return self._ctx.num_stages

    @property
    def robot_names(self) -> list[str]:
        return list(self._ctx.robot_names)

    @property
    def tool_descriptions(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._ctx.tool_descriptions)

    @property
    def sim(self) -> Any:
        """The simulator batch (for front ends that inspect the world)."""
        return self._ctx.sim

    # -- episodes ----------------------------------------------------------------------------
    def reset(self, seed: SeedArg = None) -> None:
        """Start a new episode in every slot.

        ``seed``: None (the executor's seed), an int (slot i gets ``seed + i``) or one seed
        per slot. The same seed gives the same episode: initial state and error sampling.
        """
        if seed is None:
            seed = self.seed
        if isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_slots)]
        else:
            seeds = [int(s) for s in seed]
            if len(seeds) != self.num_slots:
                raise ValueError(f"{len(seeds)} seeds for {self.num_slots} slots")
        self._ctx.sim.reset(seed=seeds)
        self._start_episodes(list(range(self.num_slots)), seeds)

    def reset_slot(self, slot: int, seed: int | None = None) -> None:
        """Start a new episode in one slot only (default seed: the executor's ``seed + slot``)."""
        self._check_slot(slot)
        seed = self.seed + slot if seed is None else int(seed)
        self._ctx.sim.reset(seed=[seed], slots=[slot])
        self._start_episodes([slot], [seed])

    def agent_view(self, slot: int) -> AgentView:
        """What the agent sees in ``slot`` before its next decision."""
        return build_view(self._ctx, self._state(slot))

    def record(self, slot: int) -> EpisodeRecord:
        """The record of the slot's current (or just finished) episode."""
        state = self._state(slot)
        record = state.record
        record.attributes = copy.deepcopy(state.attributes)
        return record

    def status(self, slot: int) -> str:
        """The slot's episode status: running, success, failed, exceeded, error, or a
        front end's own end status."""
        return self._state(slot).status

    def end_episode(self, slot: int, status: str, reason: str = "") -> bool:
        """End a running episode with a front end's status (e.g. ``"no_action"``).

        Returns False (and changes nothing) when the episode is already over.
        """
        if not isinstance(status, str) or not status or status == RUNNING:
            raise ValueError(f"end_episode needs a final status other than {RUNNING!r}")
        state = self._state(slot)
        if not state.running:
            return False
        self._end(state, status, reason)
        state.messages = [feedback_message(state.feedback)] if state.feedback else state.messages
        return True

    def close(self) -> None:
        """Release the simulator (when the executor created it)."""
        if self._owns_sim:
            self._ctx.sim.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- stepping ----------------------------------------------------------------------------
    def submit(self, decisions: Mapping[int, Any]) -> dict[int, StepOutcome]:
        """Run one decision per listed slot; tool batches of all slots share simulator steps.

        A decision is a ``Decision`` (or a mapping with ``say`` / ``tool_calls``). Anything
        malformed is recorded as such and never raises; scenario exceptions end only their
        slot, with status ``error``.
        """
        start = time.perf_counter()
        ctx = self._ctx
        outcomes: dict[int, StepOutcome] = {}
        steps: dict[int, _Step] = {}
        batch_calls = {}
        for slot, raw in decisions.items():
            state = self._state(slot)
            if not state.running:
                outcomes[slot] = self._over_outcome(state)
                continue
            step = self._classify(state, normalize_decision(raw))
            steps[slot] = step
            if step.kind == "batch":
                batch_calls[slot] = step.decision.calls
        states = {slot: self._state(slot) for slot in steps}
        run = run_batches(ctx, states, batch_calls)
        batches = run.batches
        obs = run.obs if run.obs is not None or not batches else ctx.sim.observe()
        entered: list[int] = []
        for slot, step in steps.items():
            step.batch = batches.get(slot)
            state = states[slot]
            try:
                if self._settle(state, step, obs):
                    entered.append(slot)
            except Exception as exc:  # scenario code (goal, log check, transition, judge)
                self._fail_with_error(state, f"verifying stage {step.stage_index}", exc)
        entered = [s for s in entered if self._has_errors(states[s])]
        if entered:
            raw_obs = ctx.sim.observe()
            for slot in entered:
                state = states[slot]
                try:
                    sample_stage_errors(ctx, state, raw_obs)
                except Exception as exc:
                    self._fail_with_error(state, f"sampling errors of stage {state.stage_index}", exc)
        elapsed = time.perf_counter() - start
        for slot, step in steps.items():
            outcomes[slot] = self._conclude(states[slot], step, elapsed)
        return outcomes

    # -- internals ---------------------------------------------------------------------------
    def _check_slot(self, slot: int) -> None:
        if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < self.num_slots:
            raise IndexError(f"slot {slot!r} out of range for {self.num_slots} slots")

    def _state(self, slot: int) -> SlotState:
        self._check_slot(slot)
        state = self._slots[slot]
        assert state is not None
        return state

    def _has_errors(self, state: SlotState) -> bool:
        """Whether the slot's (running) current stage has errors to sample."""
        stage = self._ctx.stages[state.stage_index]
        return state.running and bool(stage.error_parameters.possible_errors)

    def _new_record(self, slot: int, seed: int) -> EpisodeRecord:
        stages = [
            StageRecord(
                index=i,
                name=type(stage).__name__,
                description=stage.stage_goal_description,
                text_only=bool(stage.is_text_only()),
                target_tool_calls=stage.target_tool_calls,
                max_tool_calls=stage.max_tool_calls,
            )
            for i, stage in enumerate(self._ctx.stages)
        ]
        return EpisodeRecord(
            task=self.task.name,
            env_id=self.task.maniskill_env_id,
            slot=slot,
            seed=seed,
            robot_names=list(self._ctx.robot_names),
            stages=stages,
            started_at=time.time(),
        )

    def _start_episodes(self, slots: list[int], seeds: list[int]) -> None:
        ctx = self._ctx
        attributes = copy.deepcopy(self.task.situation_init.attributes)
        attributes["known_robots"] = list(ctx.robot_names)
        started = []
        for slot, seed in zip(slots, seeds, strict=True):
            start = time.perf_counter()
            state = SlotState(
                slot=slot,
                seed=seed,
                rng=random.Random(seed),
                record=self._new_record(slot, seed),
                attributes=copy.deepcopy(attributes),
            )
            self._slots[slot] = state
            try:
                state.reference = ctx.sim.save_slot(slot)
                state.enter_stage(0)
                apply_entry_transition(ctx, state)
                started.append(slot)
            except Exception as exc:
                self._fail_with_error(state, "applying the entry transition of stage 0", exc)
            state.messages = stage_entry_messages(ctx, state, None, previous_was_action=False)
            state.record.engine_s += time.perf_counter() - start
        started = [s for s in started if self._has_errors(self._state(s))]
        if started:
            raw_obs = ctx.sim.observe()
            for slot in started:
                state = self._state(slot)
                try:
                    sample_stage_errors(ctx, state, raw_obs)
                except Exception as exc:
                    self._fail_with_error(state, "sampling errors of stage 0", exc)

    def _classify(self, state: SlotState, decision: NormalizedDecision) -> _Step:
        stage = self._ctx.stages[state.stage_index]
        step = _Step(
            slot=state.slot,
            decision=decision,
            stage_index=state.stage_index,
            inputs=[m.to_dict() for m in state.messages],
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
                    step.violation = (
                        f"{refused[0]} is not allowed in this stage. "
                        f"Allowed tools are: {sorted(allowed)}"
                    )
                else:
                    step.kind = "batch"
        else:
            step.kind = "batch" if decision.calls else "no_action"
        return step

    def _settle(self, state: SlotState, step: _Step, obs: dict[str, Any] | None) -> bool:
        """Outcome of the step for its stage; True when a new stage was entered."""
        ctx = self._ctx
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
                self._fail_with_error(
                    state, batch.error_where, batch.error, batch.error_traceback
                )
                step.feedback = build_feedback(step.calls, decision_calls)
                return False
            failing = [c for c in step.calls if c.must_fail_stage]
            if failing:
                step.success = StageSuccess.FAILED
                step.failure_reason = failing[0].message or "A call failed the stage."
            elif not stage.is_text_only():
                assert obs is not None
                start = time.perf_counter()
                step.verification = verify_stage(ctx, state, obs)
                step.timings["stage_verify_s"] = time.perf_counter() - start
                step.success = StageSuccess(step.verification)
                if step.success is StageSuccess.FAILED:
                    step.failure_reason = "The stage failed its verification."
            step.feedback = build_feedback(
                step.calls, decision_calls, failure_reason=step.failure_reason
            )
        return self._advance(state, step, stage)

    def _advance(self, state: SlotState, step: _Step, stage: Any) -> bool:
        """Apply the step's stage outcome to the episode; True when a new stage was entered."""
        ctx = self._ctx
        step.stage_state = stage.get_stage_state(state.effective_tool_calls, step.success)
        stage_record = state.record.stages[step.stage_index]
        stage_record.tool_calls = state.tool_calls
        stage_record.forgiven_tool_calls = state.forgiven_tool_calls
        stage_record.state = step.stage_state.name
        stage_record.success = step.success.name
        state.feedback = step.feedback
        if step.success is StageSuccess.FAILED:
            self._end(state, FAILED, step.failure_reason or "The stage failed.")
        elif step.success is StageSuccess.FINISH:
            if step.stage_index == ctx.num_stages - 1:
                self._end(state, SUCCESS, "Every stage was completed.")
            else:
                stage_boundary(ctx, state)
                state.messages = stage_entry_messages(
                    ctx, state, step.feedback, previous_was_action=not stage.is_text_only()
                )
                return True
        elif step.kind == "batch" and step.stage_state is StageState.EXCEEDED:
            self._end(
                state,
                EXCEEDED,
                f"Stage {step.stage_index} reached its maximum of {stage.max_tool_calls} tool calls.",
            )
        if not state.running or step.success is not StageSuccess.FINISH:
            state.messages = [feedback_message(step.feedback)]
        return False

    def _conclude(self, state: SlotState, step: _Step, elapsed: float) -> StepOutcome:
        step.timings["total_s"] = elapsed
        state.record.engine_s += elapsed
        if not step.feedback:  # the step was cut short by a scenario exception
            step.feedback = state.feedback or build_feedback([], infos="")
        stage_record = state.record.stages[step.stage_index]
        if state.stage_index == step.stage_index:  # still in that stage: sync its counters
            stage_record.tool_calls = state.tool_calls
            stage_record.forgiven_tool_calls = state.forgiven_tool_calls
        view = build_view(self._ctx, state)
        state.record.steps.append(
            StepRecord(
                step_index=state.step_index,
                stage_index=step.stage_index,
                inputs=step.inputs,
                decision=step.decision.to_dict(),
                calls=[c.to_dict() for c in step.calls],
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

    def _over_outcome(self, state: SlotState) -> StepOutcome:
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
            next_view=build_view(self._ctx, state),
            failure_reason=message,
        )

    def _end(self, state: SlotState, status: str, reason: str) -> None:
        state.status = status
        record = state.record
        record.status = status
        record.reason = reason
        record.ended_at = time.time()
        record.wall_s = record.ended_at - record.started_at
        record.attributes = copy.deepcopy(state.attributes)

    def _fail_with_error(
        self, state: SlotState, where: str, exc: BaseException, tb: str | None = None
    ) -> None:
        if not state.running:
            return
        if isinstance(exc, JudgeError):  # an outage of the judge, not a scenario bug
            self._end(state, JUDGE_UNAVAILABLE, str(exc))
            return
        self._end(state, ERROR, f"{type(exc).__name__} while {where}: {exc}")
        state.record.traceback = tb or "".join(traceback.format_exception(exc))
        state.feedback = build_feedback(
            [], infos="", failure_reason="The episode stopped on an error in the scenario."
        )
        state.messages = [feedback_message(state.feedback)]


def _bound_tools(tools_cls: type, robot_names: list[str], sim: Any, slot: int) -> Any:
    """A ``tools_cls`` instance bound to the robots of ``slot`` (named as the task names them)."""
    tools = tools_cls()
    tools.bind_robots(dict(zip(robot_names, sim.agents(slot).values(), strict=True)))
    return tools
