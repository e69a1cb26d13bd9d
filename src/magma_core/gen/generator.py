"""Branching generation: trees of situations and candidate decisions, executed from snapshots.

One tree per seed; a definition's tree runs the task its seed generates, and with
``randomized`` its agent sees the tree's public vocabulary (:mod:`magma_core.gen.trees`). Each
situation (an agent input plus the whole-slot snapshot it resumes, which names the tree's task
and vocabulary) is asked for B candidates; each candidate is executed in a free slot restored
from its situation's snapshot, and its outcome becomes the next situation with its own
snapshot. One thread owns the trees, the slots and the store; agent requests go through
``magma run``'s in-flight pipeline (``runs.agent_requests.SlotPipeline`` and its ``Pacing``),
keyed by situation, so slots execute while the agent thinks.

Scheduling: open situations are asked breadth-first (depth, then tree, then id) while the node
budget M allows; ready candidates are executed together, up to one per slot, in the same
simulator steps. A candidate that finishes a stage continues only while fewer than K
continuations started from that stage's finishers (optimal ones at once; others are parked and
released, best first, when nothing else is left). Branches end at task success, at a failed or
exceeded stage, at an invalid answer, and at ``magma run``'s loop limits (``LoopLimits``).

Every candidate is stored with the situation it led to in one transaction; a killed run loses
only what was in flight and the same call resumes (see :mod:`magma_core.store.generation_store`).
"""

from __future__ import annotations

import copy
import heapq
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from magma_core.agents.base import Agent, error_output
from magma_core.agents.trace_per_task import TreeTraceAgent
from magma_core.gen.coaching.manager import CoachingSettings, generator_coaching
from magma_core.gen.trees import TreeTask, TreeTasks
from magma_core.protocol.agent import AgentInput, AgentOutput
from magma_core.runs.agent_requests import Pacing, SlotPipeline
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.limits import NO_ACTION, LoopLimits
from magma_core.runs.loop import build_input, initial_memory
from magma_core.simulation.data_structures import DecisionError, StageState, StageSuccess
from magma_core.simulation.executor.engine import Engine
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import scores as sc
from magma_core.store.generation_store import (
    CLOSED,
    OPEN,
    PARKED,
    CandidateRow,
    GenerationStore,
    NewSituation,
)

INVALID = "invalid"
_END_OF = {
    StageState.OPTIMAL: sc.OPTIMAL,
    StageState.ACCEPTABLE: sc.SUBOPTIMAL,
    StageState.UNASSESSED: sc.UNASSESSED,
}


@dataclass
class GenSettings:
    """How trees grow. ``branches`` B, ``max_per_stage`` K, ``max_nodes`` M (candidates in
    all trees), ``trees`` T with seeds ``seed + t``; ``limits``: when a branch ends as an
    episode of ``magma run`` would (the same :class:`LoopLimits`)."""

    branches: int = 2
    max_per_stage: int = 10
    max_nodes: int = 200
    trees: int = 1
    seed: int = 0
    limits: LoopLimits = field(default_factory=LoopLimits)
    single_output: bool = False  # ask once per candidate (also when the agent says so)

    def shape(self) -> dict[str, Any]:
        """The settings a resumed generation must keep."""
        return {"branches": self.branches, "max_per_stage": self.max_per_stage, "seed": self.seed,
                "max_idle_decisions": self.limits.max_idle_decisions,
                "max_decisions": self.limits.max_decisions}


@dataclass
class _Situation:
    id: int
    tree: int
    stage: int
    depth: int
    idle: int
    agent_input: dict[str, Any]
    snapshot: SlotSnapshot | None = None
    stored: set[int] = field(default_factory=set)  # candidate indices in the store
    pending: set[int] = field(default_factory=set)  # candidate indices asked, not yet stored
    queued: bool = False  # waiting in the queue to be asked


@dataclass
class _Ready:
    situation: int
    output: AgentOutput


class Generator:
    """Grows the trees of generation ``name`` for ``task`` with ``agent`` on ``executor``.

    ``trees``: what each tree runs (default: ``task`` in canonical names); with a randomised
    ``trees`` the executor is used behind the public-vocabulary seam. ``pacing``: how agent
    requests go out (as for ``magma run``; default one in flight per slot). ``listener``
    sees ``("candidate", tree, counts)`` as each candidate is stored.
    """

    def __init__(
        self,
        task: Any,
        agent: Agent,
        executor: Engine,
        store: GenerationStore,
        name: str,
        settings: GenSettings,
        listener: Listener | None = None,
        *,
        trees: TreeTasks | None = None,
        pacing: Pacing | None = None,
        coaching: CoachingSettings | None = None,
    ) -> None:
        self.trees = trees or TreeTasks(task)
        if self.trees.randomized and not isinstance(executor, PublicVocabularyExecutor):
            executor = PublicVocabularyExecutor(executor)  # not closed here: the caller's engine
        self.task, self.agent, self.executor, self.store = task, agent, executor, store
        self.name, self.settings = name, settings
        self.pacing = pacing or Pacing()
        self.listener = listener or no_listener
        self.timings = {"restore_s": 0.0, "snapshot_s": 0.0, "submit_s": 0.0, "store_s": 0.0,
                        "agent_wait_s": 0.0}
        self._open: dict[int, _Situation] = {}
        self._queue: list[tuple[int, int, int]] = []  # (depth, tree, id) not yet asked
        self._parked: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (tree, stage) -> (rank, id)
        self._started: dict[tuple[int, int], int] = {}
        self._ready: deque[_Ready] = deque()
        self._tree: dict[int, TreeTask] = {}
        self._text_only: dict[int, list[bool]] = {}  # per tree: its stages' text-only flags
        self._nodes = 0  # candidates stored or in flight
        self.executed = 0
        self.successes = 0
        self.busy = 0  # slots used by the last batch
        try:
            capabilities = agent.info().capabilities
        except Exception:  # an agent that cannot tell: assume protocol 2.0's num_outputs works
            capabilities = {}
        self._single_output = settings.single_output or capabilities.get("num_outputs") is False
        # coaching hook: repairs of failed branches (magma_core.gen.coaching)
        self.coaching = None if coaching is None else generator_coaching(self, coaching)
        self._coached: dict[tuple[int, int], dict[str, Any]] = {}  # (situation, index) -> record

    # -- setup and resume --------------------------------------------------------------------
    def _add_tree(self, tree: int, tree_task: TreeTask) -> None:
        self._tree[tree] = tree_task
        self._text_only[tree] = [bool(stage.is_text_only())
                                 for stage in self.executor.stages_for(tree_task.task)]
        if isinstance(self.agent, TreeTraceAgent):
            self.agent.add_tree(tree, tree_task.reference_trace())

    def _bind(self, node: _Situation) -> None:
        if isinstance(self.agent, TreeTraceAgent):
            self.agent.bind(node.id, node.tree)

    def _load(self) -> None:
        for t in self.store.trees(self.name):
            self._add_tree(t["tree"], self.trees.load(t["seed"], t["task"], t["vocabulary"]))
        situations = self.store.situations(self.name)
        candidates = self.store.candidates(self.name)
        self._next_situation = max((s.id for s in situations), default=-1) + 1
        self._next_candidate = max((c.id for c in candidates), default=-1) + 1
        self._nodes = len(candidates)
        self.successes = sum(c.episode_status == "success" for c in candidates)
        stored: dict[int, set[int]] = {}
        for c in candidates:
            stored.setdefault(c.situation, set()).add(c.candidate_index)
        parents = {c.id: c for c in candidates}
        for s in situations:
            parent = parents.get(s.parent) if s.parent is not None else None
            if parent is not None and parent.stage != s.stage and s.status != PARKED:
                self._started[(s.tree, parent.stage)] = self._started.get((s.tree, parent.stage), 0) + 1
            if s.status == CLOSED:
                continue
            node = _Situation(s.id, s.tree, s.stage, s.depth, s.idle, s.agent_input,
                              stored=stored.get(s.id, set()))
            self._bind(node)
            if s.status == PARKED:
                self._parked.setdefault((s.tree, parent.stage if parent else s.stage), []).append(
                    (_rank(parent.end_status if parent else sc.OPTIMAL), s.id))
                self._open[s.id] = node
            else:
                self._enqueue(node)

    def _plant_trees(self) -> None:
        for tree in range(self.settings.trees):
            if tree in self._tree:
                continue
            tree_task = self.trees.new(self.settings.seed + tree)
            self._add_tree(tree, tree_task)
            if self.trees.randomized:
                self.executor.set_vocabulary(0, tree_task.vocabulary)
            self.executor.reset_slot(0, tree_task.seed, task=tree_task.task)
            memory = initial_memory(tree_task.task)
            if tree_task.vocabulary is not None:
                memory = tree_task.vocabulary.to_public_value(memory)
            node = self._new_situation(tree, stage=0, depth=0, idle=0, memory=memory, slot=0)
            situation = NewSituation(node.id, tree, None, 0, 0, 0, OPEN, None, node.agent_input,
                                     self._serialise(node.snapshot))
            self.store.add_tree(self.name, tree, tree_task.seed, node.agent_input["tools"], situation,
                                task=tree_task.stored_task(), vocabulary=tree_task.stored_vocabulary())
            self._enqueue(node)

    def _new_situation(
        self, tree: int, stage: int, depth: int, idle: int, memory: dict[str, Any], slot: int
    ) -> _Situation:
        """A situation from what ``slot`` holds now (its view, its whole snapshot)."""
        start = time.perf_counter()
        snapshot = self.executor.snapshot(slot, memory)
        self.timings["snapshot_s"] += time.perf_counter() - start
        sid = self._next_situation
        self._next_situation += 1
        view = self.executor.agent_view(slot)
        agent_input = build_input(sid, view, memory).model_dump()
        agent_input["num_outputs"] = self.settings.branches
        node = _Situation(sid, tree, stage, depth, idle, agent_input, snapshot)
        self._bind(node)
        return node

    def _serialise(self, snapshot: SlotSnapshot | None) -> bytes:
        start = time.perf_counter()
        blob = self.executor.snapshot_to_bytes(snapshot)
        self.timings["snapshot_s"] += time.perf_counter() - start
        return blob

    def _enqueue(self, node: _Situation) -> None:
        self._open[node.id] = node
        node.queued = True
        heapq.heappush(self._queue, (node.depth, node.tree, node.id))

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Grow every tree until the caps or the branch ends stop it; return the counts.

        Raises :class:`~magma_core.runs.agent_requests.AgentOutage` when the agent cannot be reached
        for any waiting situation (see :class:`Pacing`): what is stored stays, and the same
        call resumes."""
        self._load()
        self._plant_trees()
        started = time.perf_counter()
        with SlotPipeline(self.agent, self.pacing, self.executor.num_slots) as pipeline:
            while True:
                self._inject(pipeline)
                self._ask(pipeline)
                coaching = self.coaching is not None and self.coaching.busy
                if self._ready:
                    self._execute()
                    self._collect(pipeline, block=False)
                elif pipeline.waiting:
                    self._collect(pipeline, block=True, timeout=0.05 if coaching else None)
                elif coaching and self._nodes < self.settings.max_nodes:
                    self.coaching.wait(0.5)  # type: ignore[union-attr]
                elif not self._release_parked():
                    break
        self.finish()
        return {**self.store.counts(self.name), "executed": self.executed,
                "wall_s": time.perf_counter() - started, **self.timings,
                **({} if self.coaching is None else {"coaching": self.coaching.summary()})}

    def finish(self) -> None:
        """Compute every candidate's scores bottom-up and store them (and stop the coach)."""
        if self.coaching is not None:
            self.coaching.close()
        start = time.perf_counter()
        candidates = self.store.candidates(self.name)
        results = sc.subtree_results(
            sc.ScoredCandidate(c.id, c.situation, c.stage, c.end_status, c.next_situation)
            for c in candidates
        )
        self.store.set_scores(self.name, {cid: sc.results_to_json(r) for cid, r in results.items()})
        self.timings["store_s"] += time.perf_counter() - start

    def _ask(self, pipeline: SlotPipeline) -> None:
        """Ask open situations, breadth-first, while the node budget allows; at most twice
        as many inputs wait as requests may be in flight, so what is asked next is still
        chosen breadth-first when answers come back.

        A situation's input asks for its missing candidates at once (``num_outputs``; its
        key in the pipeline is ``(situation, indices)``); an agent that cannot give several
        (``single_output``) is asked once per candidate instead.
        """
        s = self.settings
        room = 2 * max(self.pacing.concurrency or self.executor.num_slots, self.executor.num_slots)
        while self._queue and len(pipeline.waiting) < room:
            budget = s.max_nodes - self._nodes
            if budget <= 0:
                return
            _, _, sid = heapq.heappop(self._queue)
            node = self._open[sid]
            node.queued = False
            free = [i for i in range(s.branches) if i not in node.stored and i not in node.pending]
            indices = free[:budget]
            if not indices:
                continue
            node.pending.update(indices)
            self._nodes += len(indices)
            if self._single_output:
                for i in indices:
                    pipeline.ask((sid, (i,)), AgentInput.model_validate(dict(node.agent_input, num_outputs=1)))
            else:
                pipeline.ask((sid, tuple(indices)),
                             AgentInput.model_validate(dict(node.agent_input, num_outputs=max(indices) + 1)))

    def _collect(self, pipeline: SlotPipeline, block: bool, timeout: float | None = None) -> None:
        """Take the answers that arrived (waiting for one when ``block``, ``timeout`` s at most).
        A candidate the agent did not answer becomes an invalid candidate (``missing_output``)."""
        start = time.perf_counter()
        answers = pipeline.answers(timeout=timeout if block else 0)
        self.timings["agent_wait_s"] += time.perf_counter() - start
        for answer in answers:
            sid, indices = answer.slot
            node = self._open[sid]
            got = list(answer.outputs)
            if len(indices) == 1 and len(got) == 1:  # asked once per candidate
                got = [got[0].model_copy(update={"candidate_index": indices[0]})]
            by_index = {o.candidate_index: o for o in got if o.candidate_index in indices}
            agent_input = AgentInput.model_validate(node.agent_input)
            for i in indices:
                output = by_index.get(i) or error_output(
                    "", agent_input, i, "missing_output", "the agent returned no output for this candidate")
                self._ready.append(_Ready(sid, output))

    # -- execution ---------------------------------------------------------------------------
    def _execute(self) -> None:
        """Run up to one ready candidate per slot, all in the same simulator steps."""
        batch: dict[int, _Ready] = {}
        while self._ready and len(batch) < self.executor.num_slots:
            item = self._ready.popleft()
            if item.output.status != "completed":
                self._store_invalid(item)
                continue
            batch[len(batch)] = item
        self.busy = len(batch)
        if not batch:
            return
        decisions: dict[int, Any] = {}
        start = time.perf_counter()
        for slot, item in batch.items():
            node = self._open[item.situation]
            self.executor.restore(slot, self._snapshot(node))
            decisions[slot] = item.output.output.to_decision()
        self.timings["restore_s"] += time.perf_counter() - start
        start = time.perf_counter()
        outcomes = self.executor.submit(decisions)
        self.timings["submit_s"] += time.perf_counter() - start
        for slot, item in batch.items():
            self._store_executed(slot, item, outcomes[slot], decisions[slot])

    def _snapshot(self, node: _Situation) -> SlotSnapshot:
        if node.snapshot is None:
            blob = self.store.snapshot_blob(self.name, node.id)
            if blob is None:
                raise RuntimeError(f"situation {node.id} of {self.name!r} has no stored snapshot")
            start = time.perf_counter()
            tree = self._tree[node.tree]
            if self.trees.randomized:
                node.snapshot = self.executor.snapshot_from_bytes(blob, tree.task, tree.vocabulary)
            else:
                node.snapshot = self.executor.snapshot_from_bytes(blob, tree.task)
            self.timings["restore_s"] += time.perf_counter() - start
        return node.snapshot

    def _store_invalid(self, item: _Ready) -> None:
        node = self._open[item.situation]
        error = item.output.error
        row = self._row(node, item.output, {"code": error.code, "message": error.message,
                                            "component": error.component} if error else {},
                        execution=None, status=INVALID, end=sc.ERROR, episode=INVALID, child=None)
        self._save(node, item.output.candidate_index, row, None)

    def _store_executed(self, slot: int, item: _Ready, outcome: Any, decision: Any) -> None:
        s = self.settings
        node = self._open[item.situation]
        episode = self.executor.status(slot)
        acted = not isinstance(decision, DecisionError) and bool(decision.tool_calls)
        idle = s.limits.idle_after(node.idle, acted, self._text_only[node.tree][node.stage])
        depth = node.depth + 1
        finished = outcome.stage_success is StageSuccess.FINISH
        if finished:
            end = _END_OF.get(outcome.stage_state, sc.UNASSESSED)
        elif outcome.stage_success is StageSuccess.FAILED or episode not in ("running", "success"):
            end = sc.ERROR
        elif outcome.stage_state is StageState.EXCEEDED:
            end = sc.ERROR
        else:
            end = sc.ONGOING
        limit = s.limits.end_of(idle, depth) if episode == "running" and end == sc.ONGOING else None
        if limit is not None:  # no action: an error end; the decision cap: a finished branch
            episode = limit[0]
            end = sc.ERROR if episode == NO_ACTION else end
            self.executor.end_episode(slot, *limit)
        child = None
        if episode == "running":
            child = self._new_situation(node.tree, outcome.next_view.stage_index, depth, idle,
                                        item.output.memory, slot)
            child_status = OPEN
            if finished:
                key = (node.tree, node.stage)
                if end == sc.OPTIMAL and self._started.get(key, 0) < s.max_per_stage:
                    self._started[key] = self._started.get(key, 0) + 1
                else:
                    child_status = PARKED
                    self._parked.setdefault(key, []).append((_rank(end), child.id))
            child_row = NewSituation(child.id, node.tree, self._next_candidate, child.stage, depth,
                                     idle, child_status, None, child.agent_input,
                                     self._serialise(child.snapshot))
        status = end if end != sc.ONGOING else "finished"
        execution = outcome.to_dict()
        execution.pop("next_view", None)
        if episode == "error":  # a scenario error: keep its reason and traceback
            record = self.executor.record(slot)
            execution.update(reason=record.reason, traceback=record.traceback)
        row = self._row(node, item.output, item.output.output.model_dump(), execution, status, end,
                        episode, child.id if child else None)
        self._save(node, item.output.candidate_index, row, child_row if child else None)
        self.executed += 1
        self.successes += episode == "success"
        if child is not None:
            self._open[child.id] = child
            if child_status == OPEN:
                child.queued = True
                heapq.heappush(self._queue, (child.depth, child.tree, child.id))
            else:
                child.snapshot = None  # parked: reloaded from the store when released

    def _row(self, node: _Situation, output: AgentOutput, payload: dict[str, Any],
             execution: dict[str, Any] | None, status: str, end: str, episode: str,
             child: int | None) -> CandidateRow:
        return CandidateRow(
            id=self._next_candidate, situation=node.id, candidate_index=output.candidate_index,
            tree=node.tree, stage=node.stage, response_status=output.status, output=payload,
            memory=copy.deepcopy(output.memory), internal_steps=list(output.internal_steps),
            execution=execution, status=status, end_status=end, episode_status=episode,
            next_situation=child, score=None,
            coaching=self._coached.get((node.id, output.candidate_index)),
        )

    def _save(self, node: _Situation, index: int, row: CandidateRow, child: NewSituation | None) -> None:
        start = time.perf_counter()
        node.stored.add(index)
        node.pending.discard(index)
        complete = all(i in node.stored for i in range(self.settings.branches)) and not node.pending
        self.store.add_candidate(self.name, row, child, close_situation=complete)
        self._next_candidate += 1
        self.timings["store_s"] += time.perf_counter() - start
        if complete:
            del self._open[node.id]  # its snapshot is no longer needed in memory
        if self.coaching is not None:  # coaching hook: route terminal events, prove attempts
            self.coaching.observe(row, child)
        self.listener("candidate", node.tree, {"tree": node.tree, "status": row.status,
                                               "episode": row.episode_status,
                                               "nodes": self._next_candidate,
                                               "successes": self.successes, "busy": self.busy})

    def _release_parked(self) -> bool:
        """Open parked stage finishers where a stage has fewer than K continuations."""
        released = False
        for key, parked in sorted(self._parked.items()):
            parked.sort()
            while parked and self._started.get(key, 0) < self.settings.max_per_stage:
                _, sid = parked.pop(0)
                self._started[key] = self._started.get(key, 0) + 1
                self.store.set_situation_status(self.name, sid, OPEN)
                node = self._open[sid]
                node.queued = True
                heapq.heappush(self._queue, (node.depth, node.tree, node.id))
                released = True
        return released and self._nodes < self.settings.max_nodes


    def _inject(self, pipeline: SlotPipeline) -> None:
        """Coaching hook (:mod:`magma_core.gen.coaching`): ask for the coached candidates, within M."""
        for injection in self.coaching.take(self.settings.max_nodes - self._nodes) if self.coaching else ():
            place = injection.place
            node = self._open.get(place.id)
            if node is None:  # a closed situation: its snapshot is reloaded from the store
                node = self._open[place.id] = _Situation(place.id, place.tree, place.stage, place.depth, place.idle,
                                                         place.agent_input, stored=set(range(self.settings.branches)))
                self._bind(node)
            node.pending.add(injection.candidate_index)
            self._coached[(place.id, injection.candidate_index)] = injection.record
            self._nodes += 1
            pipeline.ask((place.id, (injection.candidate_index,)), AgentInput.model_validate(injection.agent_input))


def _rank(end: str | None) -> int:
    """Release order of parked stage finishers: optimal, then suboptimal, then unassessed."""
    return {sc.OPTIMAL: 0, sc.SUBOPTIMAL: 1}.get(end or "", 2)
