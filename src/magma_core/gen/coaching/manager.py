"""The generator's coaching: opportunities routed to the coach, answers stored, repairs
reinjected, attempts proven by the engine.

:class:`Coaching` is what :class:`~magma_core.gen.generator.Generator` talks to:
``observe`` every stored candidate (it indexes it, routes a terminal event to the coach within
the budgets, and proves or refutes the coached attempts above it), ``take`` the repairs ready
to be executed (each an :class:`Injection`: a coached candidate of the diagnosed situation,
whose input carries the repair in ``extra_keys["coaching"]``; the generator asks the agent and
executes the answer from that situation's whole-slot snapshot in a free slot, as any
candidate), ``drain`` the coach's outstanding answers at each wave's end (so the repairs are
a function of what was stored, not of the coach's speed), and ``load`` what a killed run stored (pending requests are asked again, planned
repairs not yet stored are reinjected, terminal candidates without a row are routed: nothing
lost, nothing asked twice).

A coached candidate is a coaching success only when a continuation of it (itself included)
reaches the stage's success as the engine validated it (a FINISH verdict; for a suboptimal
repair an OPTIMAL one).
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from magma_core.gen.coaching.budgets import MAX_PENDING, MAX_UNPROVEN, CoachingBudget
from magma_core.gen.coaching.coaches import (
    CoachContext,
    CoachReply,
    ask_coach,
    build_coach,
    build_request,
    terminal_feedback,
)
from magma_core.gen.coaching.opportunities import (
    FIXED,
    RECOVERY,
    SUBOPTIMAL,
    Node,
    Place,
    TreeIndex,
    coaching_type,
    skip_reason,
    stage_trajectory,
    terminal_event,
)
from magma_core.protocol.coaching import CoachingRequest
from magma_core.store.coaching_rows import CoachingRow

COACHING_KEY = "coaching"  # AgentInput.extra_keys["coaching"]: the repair


@dataclass
class CoachingSettings:
    """``--coach SPEC`` (or a coach object) and its budgets (per stage of a tree)."""

    coach: Any
    max_pending: int = MAX_PENDING
    max_unproven: int = MAX_UNPROVEN
    options: dict[str, Any] = field(default_factory=dict)  # a model coach's own model options
    timeout: float | None = None

    def shape(self) -> dict[str, Any]:
        coach = self.coach if isinstance(self.coach, str) else getattr(self.coach, "name", "custom")
        return {"coach": coach, "coaching_max_pending": self.max_pending,
                "coaching_max_unproven": self.max_unproven}


@dataclass
class Injection:
    """A repair to execute: candidate ``candidate_index`` of ``place``, asked with ``agent_input``."""

    place: Place
    candidate_index: int
    agent_input: dict[str, Any]
    record: dict[str, Any]  # the candidate's coaching record


@dataclass
class _InFlight:
    row: CoachingRow
    request: CoachingRequest
    candidates: list[int]  # the trajectory's candidate ids, by step id
    future: Future[CoachReply] | None = None
    reply: CoachReply | None = None


class Coaching:
    """Coaching of generation ``name`` with ``coach``; ``context_of(tree)`` gives a tree's
    :class:`CoachContext`; coached candidates get indices from ``branches`` up."""

    def __init__(self, coach: Any, settings: CoachingSettings, store: Any, name: str,
                 context_of: Any, branches: int) -> None:
        self.coach, self.settings, self.store, self.name = coach, settings, store, name
        self.context_of, self.branches = context_of, branches
        self.index = TreeIndex()
        self.budget = CoachingBudget(settings.max_pending, settings.max_unproven)
        self.rows: dict[int, CoachingRow] = {}
        self._seen: set[tuple[int, str]] = set()  # (terminal candidate, type)
        self._faulty: set[int] = set()
        self._attempts: dict[tuple[int, int], int] = {}
        self._planned: dict[int, set[int]] = {}  # situation -> coached indices planned
        self._in_flight: dict[int, _InFlight] = {}
        self._ready: list[Injection] = []
        self._pool: ThreadPoolExecutor | None = None
        self._next_id = 0
        self._loaded = False
        self.timings = {"coach_s": 0.0, "coaching_s": 0.0}  # the coach's thinking; all of coaching

    # -- generator hooks ---------------------------------------------------------------------
    def load(self) -> None:
        """Index what is stored and take up what a killed run left (see the module doc);
        done on the first :meth:`take`, once the generator planted its trees."""
        self._loaded = True
        candidates = self.store.candidates(self.name)
        for s in self.store.situations(self.name):
            self.add_place(s)
        for c in candidates:
            self.index.add_node(_node(c))
        for row in self.store.coaching(self.name):
            self.rows[row.id] = row
            self._next_id = max(self._next_id, row.id + 1)
            self._seen.add((row.terminal, row.type))
            key = (row.tree, row.stage)
            if row.status != "skipped":
                self._attempts[key] = max(self._attempts.get(key, 0), row.attempt)
            for p in row.proposals or []:
                self._faulty.add(p["faulty"])
                self._planned.setdefault(p["situation"], set()).add(p["candidate_index"])
                if p["candidate_index"] not in self.index.by_situation.get(p["situation"], {}):
                    self._ready.append(self._injection(row, p))
            if row.status == "pending":
                self.budget.asked(key, row.id)
                request = CoachingRequest.model_validate(row.request)
                path = stage_trajectory(self.index, row.terminal)
                self._submit(_InFlight(row, request, path.candidates))
            elif row.outcome == "unproven":
                self.budget.unproven.setdefault(key, set()).add(row.id)
        for c in candidates:
            self._route(self.index.nodes[c.id])

    def add_place(self, s: Any) -> None:
        """Index a situation (a stored row or a new one)."""
        self.index.add_place(Place(s.id, s.tree, s.stage, s.parent, s.agent_input, s.depth, s.idle))

    def observe(self, row: Any, child: Any | None) -> None:
        """A candidate (and the situation it led to) was stored."""
        start = time.perf_counter()
        if not self._loaded:
            self.load()
        if child is not None:
            self.add_place(child)
        node = _node(row)
        self.index.add_node(node)
        self._settle(node)
        self._route(node)
        self.timings["coaching_s"] += time.perf_counter() - start

    def summary(self) -> dict[str, Any]:
        """Stored rows by status and outcome, and the seconds coaching took."""
        return {**self.store.coaching_counts(self.name), **{k: round(v, 4) for k, v in self.timings.items()}}

    def take(self, limit: int) -> list[Injection]:
        """Up to ``limit`` repairs ready to be executed (answers that arrived are stored first)."""
        start = time.perf_counter()
        if not self._loaded:
            self.load()
        self._poll()
        self.timings["coaching_s"] += time.perf_counter() - start
        out, self._ready = self._ready[:max(limit, 0)], self._ready[max(limit, 0):]
        return out

    @property
    def busy(self) -> bool:
        """Whether the coach is still thinking or repairs wait to be executed."""
        return bool(self._in_flight) or bool(self._ready)

    def wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for an answer of the coach."""
        futures = [f.future for f in self._in_flight.values() if f.future is not None]
        if futures:
            import concurrent.futures as cf

            cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        self._poll()

    def drain(self) -> None:
        """Wait for every answer the coach still owes and store it: the generator calls this
        at each wave's end, so which repairs join the next wave (and in which order) depends
        on what was stored, never on how fast the coach answered."""
        if not self._loaded:
            self.load()
        while self._in_flight:
            self.wait(1.0)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        close = getattr(self.coach, "close", None)
        if callable(close):
            close()

    # -- routing -----------------------------------------------------------------------------
    def _route(self, node: Node) -> None:
        event = terminal_event(node)
        if event is None:
            return
        place = self.index.places[node.situation]
        context = self.context_of(place.tree)
        text_only = node.stage < len(context.stages) and bool(context.stages[node.stage].is_text_only())
        kind = coaching_type(event, text_only)
        if (node.id, kind) in self._seen:
            return
        self._seen.add((node.id, kind))
        key = (place.tree, node.stage)
        trajectory = stage_trajectory(self.index, node.id)
        reason = skip_reason(self.index, trajectory, kind, self._faulty) or self.budget.refusal(key)
        row = CoachingRow(id=self._next_id, tree=place.tree, stage=node.stage, terminal=node.id,
                          event=event, type=kind, status="skipped", source=self.coach.name, attempt=0,
                          reason=reason)
        self._next_id += 1
        if reason is None:
            self._attempts[key] = row.attempt = self._attempts.get(key, 0) + 1
            goal = ""
            if node.stage < len(context.stages):
                goal = str(getattr(context.stages[node.stage], "stage_goal_description", ""))
            request = build_request(self.name, f"{self.name}:{row.id}", event, trajectory, goal,
                                    terminal_feedback(node.execution, node.error))
            row.status, row.request = "pending", request.model_dump(mode="json")
        self.store.add_coaching(self.name, row)
        self.rows[row.id] = row
        if reason is None:
            self.budget.asked(key, row.id)
            self._submit(_InFlight(row, request, trajectory.candidates))

    def _submit(self, job: _InFlight) -> None:
        context = self.context_of(job.row.tree)
        if getattr(self.coach, "name", "") == "trace":  # an oracle: answer at once, in order
            job.reply = self._ask(job.request, context)
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="magma-coach")
            job.future = self._pool.submit(self._ask, job.request, context)
        self._in_flight[job.row.id] = job
        self._poll()

    def _ask(self, request: CoachingRequest, context: CoachContext) -> CoachReply:
        start = time.perf_counter()
        try:
            return ask_coach(self.coach, request, context)
        finally:
            self.timings["coach_s"] += time.perf_counter() - start

    def _poll(self) -> None:
        for row_id in sorted(self._in_flight):
            job = self._in_flight[row_id]
            if job.reply is None and job.future is not None and job.future.done():
                job.reply = job.future.result()
            if job.reply is not None:
                del self._in_flight[row_id]
                self._answer(job)

    def _answer(self, job: _InFlight) -> None:
        row, request, reply = job.row, job.request, job.reply
        assert reply is not None
        response = reply.response
        proposals: list[dict[str, Any]] = []
        notes: list[str] = []
        for p in response.proposals:
            point = request.point(p.reinjection_point_id)
            if point is None or point.input_step_id is None:
                notes.append(f"{p.reinjection_point_id}: only step reinjection points are executed")
                continue
            recovery = p.reinjection_point_id.startswith("recovery:")
            faulty_step = point.input_step_id - 1 if recovery else point.input_step_id
            place = self.index.places[self.index.nodes[job.candidates[point.input_step_id]].situation]
            index = self._next_index(place.id)
            proposals.append({"point": p.reinjection_point_id, "situation": place.id,
                              "candidate_index": index, "role": RECOVERY if recovery else FIXED,
                              "faulty": job.candidates[faulty_step], "extra_keys": p.extra_keys})
        status = response.status if proposals or response.status != "corrected" else "abandoned"
        reason = response.reason or ("; ".join(notes) if notes else None)
        row.status, row.reason, row.raw, row.proposals = status, reason, reply.raw, proposals
        row.response = response.model_dump(mode="json")
        row.diagnosis = None if response.diagnosis is None else response.diagnosis.model_dump(mode="json")
        row.outcome = "unproven" if proposals else None
        self.store.answer_coaching(self.name, row.id, status, reason=reason, response=row.response,
                                   raw=reply.raw, diagnosis=row.diagnosis, proposals=proposals,
                                   outcome=row.outcome)
        self.budget.answered((row.tree, row.stage), row.id, corrected=bool(proposals))
        for p in proposals:
            self._faulty.add(p["faulty"])
            self._ready.append(self._injection(row, p))

    def _next_index(self, situation: int) -> int:
        used = set(self.index.by_situation.get(situation, {})) | self._planned.get(situation, set())
        index = max([self.branches - 1, *used]) + 1
        self._planned.setdefault(situation, set()).add(index)
        return index

    def _injection(self, row: CoachingRow, proposal: dict[str, Any]) -> Injection:
        place = self.index.places[proposal["situation"]]
        agent_input = copy.deepcopy(place.agent_input)
        agent_input["num_outputs"] = 1
        agent_input["extra_keys"] = {**(agent_input.get("extra_keys") or {}),
                                     COACHING_KEY: proposal["extra_keys"]}
        record = {"request": row.id, "role": proposal["role"], "type": row.type, "source": row.source,
                  "attempt": row.attempt, "point": proposal["point"]}
        return Injection(place, proposal["candidate_index"], agent_input, record)

    # -- proving -----------------------------------------------------------------------------
    def _settle(self, node: Node) -> None:
        """Prove the coached attempts above ``node`` in its stage when it reached the stage's
        success; refute the unproven ones when it ended the branch otherwise."""
        execution = node.execution or {}
        finished = execution.get("stage_success") == "FINISH"
        event = terminal_event(node)
        if not finished and event is None:
            return
        for _, step in stage_trajectory(self.index, node.id).steps:
            record = step.coaching
            row = self.rows.get(record["request"]) if record else None
            if row is None or row.outcome == "proven":
                continue
            success = finished and (row.event != SUBOPTIMAL or execution.get("stage_state") == "OPTIMAL")
            outcome = "proven" if success else ("refuted" if event and event != SUBOPTIMAL else None)
            if outcome is None or outcome == row.outcome:
                continue
            row.outcome = outcome
            self.store.set_coaching_outcome(self.name, row.id, outcome)
            self.budget.settled((row.tree, row.stage), row.id)


def _node(c: Any) -> Node:
    completed = c.response_status == "completed"
    return Node(c.id, c.situation, c.candidate_index, c.stage, c.output if completed else None,
                c.execution, c.end_status, c.episode_status, None if completed else c.output,
                c.next_situation, getattr(c, "coaching", None))


def generator_coaching(generator: Any, settings: CoachingSettings) -> Coaching:
    """The :class:`Coaching` of ``generator`` (a :class:`~magma_core.gen.generator.Generator`)."""
    coach = settings.coach
    if isinstance(coach, str):
        coach = build_coach(coach, settings.options, settings.timeout)

    def context_of(tree: int) -> CoachContext:
        tree_task = generator._tree[tree]
        return context_for(tree_task, generator.executor.stages_for(tree_task.task), tree)

    return Coaching(coach, settings, generator.store, generator.name, context_of,
                    generator.settings.branches)


def context_for(tree_task: Any, stages: list[Any], tree: int) -> CoachContext:
    """The :class:`CoachContext` of a tree running ``tree_task``."""
    return CoachContext(tree=tree, stages=stages, reference=_reference(tree_task))


def _reference(tree_task: Any) -> Any:
    try:
        return tree_task.reference_trace()
    except Exception:  # a task whose trace cannot be built: the oracle abandons
        return None
