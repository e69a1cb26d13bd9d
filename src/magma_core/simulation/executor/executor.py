"""``Executor``: THE execution engine. Every front end (tool tester, ``magma run``, benchmark,
generation) drives a task through it.

One executor runs one task in N slots of one simulator batch. Each slot runs an episode:
``agent_view(slot)`` says what the agent sees, ``submit({slot: decision})`` runs the
decisions of several slots in the same simulator steps and returns each slot's
``StepOutcome``, ``record(slot)`` is the episode's full record::

    from magma_core.simulation.data_structures import Decision, ToolCall

    with Executor(task, num_slots=2, seed=7) as executor:
        view = executor.agent_view(0)  # instruction, tools, attributes, stage
        outcomes = executor.submit({
            0: Decision(tool_calls=[ToolCall("pick", {"object": "cube"}, "panda")]),
            1: Decision(say="Done."),
        })
        if outcomes[0].next_view.episode_over:
            print(executor.record(0).to_dict()["status"])

The executor holds the slots and their episodes; one ``submit`` is ``submission``'s, the
context each slot's task runs in is ``task_contexts``'s. The per-decision steps are in
``decision_steps`` (plain functions), tool batches in ``batch``,
stage checks in ``verification``, what the agent sees in ``views``, the motion seam in
``motion`` and what the engine needs from a simulator in ``simulator``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures.verdict import Judge
from magma_core.simulation.executor.control_record import ControlRecorder
from magma_core.simulation.executor.decision_steps import (
    end_episode,
    failed_start,
    start_episodes,
)
from magma_core.simulation.executor.motion import MotionDriver, default_motion
from magma_core.simulation.executor.records import RUNNING, AgentView, EpisodeRecord, StepOutcome
from magma_core.simulation.executor.simulator import Simulator
from magma_core.simulation.executor.skill_state import SkillSlotState
from magma_core.simulation.executor.skill_steps import refresh_statuses
from magma_core.simulation.executor.slots import EngineContext, SlotState
from magma_core.simulation.executor.snapshots import SlotSnapshot, capture, rebuild
from magma_core.simulation.executor.submission import submit_decisions
from magma_core.simulation.executor.task_check import stages_to_run
from magma_core.simulation.executor.task_contexts import TaskContexts, build_context
from magma_core.simulation.executor.views import build_view, feedback_message
from magma_core.simulation.tasks import BaseTask

if TYPE_CHECKING:  # named for the annotations only
    from numpy import ndarray  # the simulator's images (numpy comes with it)

    from magma_core.simulation.stage import BaseTaskStage

SeedArg = int | Sequence[int] | None


class Executor:
    """Runs ``task`` in ``num_slots`` slots (see the module docstring).

    Args:
        task: a ``BaseTask``; validated, and its answer flags materialised into completion
            stages (the task itself is never modified).
        num_slots: N, the slots that run episodes side by side in the same simulator steps.
        seed: base seed; ``reset()`` starts slot i with ``seed + i``.
        judge: validates answers of JUDGE text-only stages (a ``Judge``: ``judge(rule,
            question, answer) -> Verdict``). Required when the task has such stages.
        backend: simulator backend, ``"auto"``, ``"cpu"`` or ``"gpu"``.
        env_options: ``gym.make`` options over the task's own ``env_options``.
        render: build the simulator with cameras for :meth:`camera_images` (default off: free).
        fresh_scene: a fresh PhysX scene per episode (bit-identical worlds; ``SimBatch``'s).
        sim: an already-built ``Simulator`` to run on (a ``SimBatch``, or a stand-in).
        motion: the motion driver (default: the simulation layer's, on ``sim``).
        skills: run with skills (``BaseSkill`` classes; ``[]``: the plain tools as one-call
            skills and ``cancel_current_action``); None: the task's own ``skills`` class
            attribute if it has one, else plain tools (see ``skill_steps``).
        record_control: record every control step's joint state and command per slot
            (:attr:`control_recorder`, see ``control_record``; default off: free).
    """

    def __init__(
        self,
        task: BaseTask,
        num_slots: int = 1,
        *,
        seed: int = 0,
        judge: Judge | None = None,
        backend: str = "auto",
        env_options: Mapping[str, object] | None = None,
        render: bool = False,
        fresh_scene: bool = True,
        sim: Simulator | None = None,
        motion: MotionDriver | None = None,
        skills: Sequence[type] | None = None,
        record_control: bool = False,
    ) -> None:
        if not isinstance(task, BaseTask):
            raise TypeError(f"Executor needs a BaseTask, got {type(task).__name__}")
        if not isinstance(num_slots, int) or isinstance(num_slots, bool) or num_slots < 1:
            raise ValueError(f"num_slots must be an int >= 1, got {num_slots!r}")
        stages_to_run(task, judge)  # a task the executor cannot run is refused before the simulator
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
                render=render,
                fresh_scene=fresh_scene,
            )
        self._owns_sim = owns_sim
        self._control: ControlRecorder | None = None
        if record_control:  # opt-in: the engine runs on the recording wrapper
            sim = self._control = ControlRecorder(sim)
        try:
            if getattr(sim, "num_slots", num_slots) != num_slots:
                raise ValueError(f"sim has {sim.num_slots} slots, executor wants {num_slots}")
            if motion is None:
                motion = default_motion(sim)
            self._ctx = build_context(task, sim, motion, num_slots, judge, skills)
            self._slots: list[SlotState | None] = [None] * num_slots
            # The context each slot's episode runs in: the executor's task, or the task given
            # to ``reset_slot`` (e.g. generated tasks of one definition, side by side).
            self._slot_ctxs: list[EngineContext] = [self._ctx] * num_slots
            self._task_ctxs = TaskContexts(self._ctx)  # other tasks' contexts, for restores
            self.reset()
        except BaseException:
            if owns_sim:
                sim.close()
            raise

    # -- public properties -------------------------------------------------------------------
    @property
    def stages(self) -> list[BaseTaskStage]:
        """The stages as run (completion stages materialised)."""
        return list(self._ctx.stages)

    @property
    def num_stages(self) -> int:
        return self._ctx.num_stages

    @property
    def robot_names(self) -> list[str]:
        return list(self._ctx.robot_names)

    @property
    def tool_descriptions(self) -> list[JSONDict]:
        return copy.deepcopy(self._ctx.tool_descriptions)

    @property
    def control_recorder(self) -> ControlRecorder | None:
        """The control-rate recorder (``record_control=True``), else None."""
        return self._control

    @property
    def sim(self) -> Simulator:
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
        self._slot_ctxs = [self._ctx] * self.num_slots
        try:
            self._ctx.sim.reset(seed=seeds)
        except Exception:  # a world that cannot reset some seed: find it slot by slot
            for slot, slot_seed in enumerate(seeds):
                self.reset_slot(slot, slot_seed)
            return
        self._start_episodes(list(range(self.num_slots)), seeds)

    def reset_slot(self, slot: int, seed: int | None = None, task: BaseTask | None = None) -> None:
        """Start a new episode in one slot only (default seed: the executor's ``seed + slot``).

        ``task``: run this task in the slot instead of the executor's (e.g. the task a
        definition generated for this episode). It must share the executor task's world, env
        options, tools, tools constant and robots (``ValueError`` otherwise) and pass the
        same checks (a judge for judged stages).

        A world reset that raises for ``seed`` makes the slot's episode an ``error`` one (its
        traceback in the record) and puts the slot's last good world back, so that the next
        ``reset_slot`` starts cleanly.
        """
        self._check_slot(slot)
        ctx = self._ctx_of(task)
        seed = self.seed + slot if seed is None else int(seed)
        self._slot_ctxs[slot] = ctx
        try:
            self._ctx.sim.reset(seed=[seed], slots=[slot])
        except Exception as exc:  # the world's reset (scenario code) raised for this seed
            state = failed_start(ctx, slot, seed, self._slots[slot], exc)
            if ctx.skills is not None:
                state.skills = SkillSlotState()
            self._slots[slot] = state
            return
        self._start_episodes([slot], [seed])

    def task_of(self, slot: int) -> BaseTask:
        """The task the slot's episode runs."""
        self._check_slot(slot)
        return self._slot_ctxs[slot].task

    def camera_images(self, slot: int) -> dict[str, ndarray]:
        """Camera name → RGB image (uint8 ``H x W x 3``) of ``slot`` now; ``{}`` without ``render``."""
        images = getattr(self._ctx.sim, "camera_images", None)
        return dict(images(slot)) if callable(images) else {}

    def agent_view(self, slot: int) -> AgentView:
        """What the agent sees in ``slot`` before its next decision."""
        return build_view(self._slot_ctxs[slot], self._state(slot))

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
        end_episode(state, status, reason)
        state.messages = [feedback_message(state.feedback)] if state.feedback else state.messages
        return True

    # -- snapshots ---------------------------------------------------------------------------
    def snapshot(self, slot: int, memory: JSONDict | None = None) -> SlotSnapshot:
        """The whole of ``slot`` (world and episode state, the task it runs, plus the agent
        ``memory`` a front end carries), frozen; see
        :mod:`magma_core.simulation.executor.snapshots`."""
        state = self._state(slot)
        ctx = self._slot_ctxs[slot]
        task = None if ctx is self._ctx else ctx.task
        return capture(state, self._ctx.sim.save_slot(slot), memory, task)

    def restore(self, slot: int, snapshot: SlotSnapshot) -> None:
        """Put ``snapshot`` (from any slot) into ``slot``: the slot then runs the snapshot's
        task (another task must fit this executor as for ``reset_slot``). With ``fresh_scene``
        a slot that has stepped gets a fresh scene first, so what follows is the same in any
        slot, whatever it ran before (``SimBatch.restore_slot``)."""
        self._check_slot(slot)
        ctx = self._ctx_of(snapshot.task)
        self._ctx.sim.restore_slot(slot, snapshot.world, seed=snapshot.seed)
        self._slots[slot] = rebuild(snapshot, slot)
        self._slot_ctxs[slot] = ctx

    def snapshot_to_bytes(self, snapshot: SlotSnapshot, *, steps: bool = False) -> bytes:
        """``snapshot`` serialised (without the record's steps and world states unless
        ``steps``; without its task and vocabulary, which the caller keeps)."""
        return snapshot.to_bytes(self._ctx_of(snapshot.task), steps=steps)

    def snapshot_from_bytes(self, blob: bytes, task: BaseTask | None = None) -> SlotSnapshot:
        """A snapshot serialised by :meth:`snapshot_to_bytes`, of ``task`` (None: the
        executor's own)."""
        ctx = self._ctx_of(task)
        snapshot = SlotSnapshot.from_bytes(blob, ctx)
        return snapshot if ctx is self._ctx else dataclasses.replace(snapshot, task=ctx.task)

    def stages_for(self, task: BaseTask | None = None) -> list[BaseTaskStage]:
        """The stages of ``task`` (None: the executor's) as this executor runs them."""
        return list(self._ctx_of(task).stages)

    def _ctx_of(self, task: BaseTask | None) -> EngineContext:
        """The engine context of ``task`` (a slot's, a remembered one, or a new one)."""
        return self._task_ctxs.of(task, self._slot_ctxs)

    def close(self) -> None:
        """Release the simulator (when the executor created it)."""
        if self._owns_sim:
            self._ctx.sim.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- stepping ----------------------------------------------------------------------------
    def submit(self, decisions: Mapping[int, object]) -> dict[int, StepOutcome]:
        """Run one decision per listed slot; tool batches of all slots share simulator steps.

        A decision is a ``Decision`` (or a mapping with ``say`` / ``tool_calls``). Anything
        malformed is recorded as such and never raises; scenario exceptions end only their
        slot, with status ``error``.
        """
        return submit_decisions(self._ctx, self._slot_ctxs, self._slots, self._state, decisions)

    # -- skills ------------------------------------------------------------------------------
    @property
    def has_skills(self) -> bool:
        """Whether the task runs with skills."""
        return self._ctx.skills is not None

    def skill_state(self, slot: int) -> SkillSlotState | None:
        """A copy of the slot's skill state (running and suspended work); None without skills."""
        skills = self._state(slot).skills
        return None if skills is None else skills.clone()

    def set_skill_state(self, slot: int, skills: SkillSlotState) -> None:
        """Put back a skill state taken by ``skill_state`` (part of restoring a slot)."""
        if self._ctx.skills is None:
            raise ValueError("this executor runs without skills")
        state = self._state(slot)
        state.skills = skills.clone()
        refresh_statuses(self._slot_ctxs[slot], state)

    # -- internals ---------------------------------------------------------------------------
    def _check_slot(self, slot: int) -> None:
        if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < self.num_slots:
            raise IndexError(f"slot {slot!r} out of range for {self.num_slots} slots")

    def _state(self, slot: int) -> SlotState:
        self._check_slot(slot)
        state = self._slots[slot]
        assert state is not None
        return state

    def _start_episodes(self, slots: list[int], seeds: list[int]) -> None:
        by_ctx: dict[int, tuple[EngineContext, list[int], list[int]]] = {}
        for slot, seed in zip(slots, seeds, strict=True):
            ctx = self._slot_ctxs[slot]
            group = by_ctx.setdefault(id(ctx), (ctx, [], []))
            group[1].append(slot)
            group[2].append(seed)
        for ctx, group_slots, group_seeds in by_ctx.values():
            for slot, state in start_episodes(ctx, group_slots, group_seeds).items():
                if ctx.skills is not None:
                    state.skills = SkillSlotState()
                    refresh_statuses(ctx, state)
                self._slots[slot] = state
