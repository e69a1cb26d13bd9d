"""Branching generation: trees of situations and candidate decisions, executed from snapshots.

One tree per seed; a definition's tree runs the task its seed generates, and with
``randomized`` its agent sees the tree's public vocabulary (:mod:`magma_core.gen.trees`). Each
situation (an agent input plus the whole-slot snapshot it resumes, which names the tree's task
and vocabulary) is asked for B candidates; each candidate is executed in a free slot restored
from its situation's snapshot, and its outcome becomes the next situation with its own
snapshot. One thread owns the trees, the slots and the store; agent requests go through
``magma run``'s in-flight pipeline (:class:`~magma_core.runs.agent_requests.SlotPipeline`, paced by
a :class:`~magma_core.runs.agent_requests.Pacing`: concurrency, batch window, retries of inputs
that got no answer, outage), keyed by situation, so slots execute while the agent thinks.

Scheduling, in waves (:mod:`magma_core.gen.waves`): every queued situation is asked at once,
breadth-first (depth, then tree, then id), while the node budget M allows; the answers are
executed as they come, up to one per slot, in the same simulator steps; when the wave has run,
its results are stored in (situation, candidate index) order, which gives the ids and queues
the next wave. So the trees are a function of the command and its seeds, whatever the slot
count, the answer order or the load. A candidate that finishes a stage continues only while
fewer than K continuations started from that stage's finishers (optimal ones at once; others
are parked and released, best first, when nothing else is left: :mod:`magma_core.gen.frontier`).
Branches end at task success, at a failed or exceeded stage, at an invalid answer, and at
``magma run``'s loop limits (:class:`~magma_core.runs.limits.LoopLimits`: decisions in a row
without a tool call on an action stage; the decision cap; :mod:`magma_core.gen.branch_ends`).
With coaching, the coach's answers are awaited at each wave's end, so its repairs join the
next wave in a fixed order too.

Every candidate is stored with the situation it led to in one transaction; a killed run loses
only what was in flight and the same call resumes (see :mod:`magma_core.store.generation_store`).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from magma_core.agents.base import Agent, error_output
from magma_core.agents.trace_per_task import TreeTraceAgent
from magma_core.gen.branch_ends import INVALID
from magma_core.gen.coaching.manager import CoachingSettings, generator_coaching
from magma_core.gen.frontier import Frontier, Situation
from magma_core.gen.resume import resume, stored_snapshot
from magma_core.gen.settings import GenSettings
from magma_core.gen.trees import TreeTask, TreeTasks
from magma_core.gen.waves import Executed, candidate_row, read_slot
from magma_core.protocol.agent import AgentInput, AgentOutput
from magma_core.runs.agent_requests import Pacing, SlotPipeline
from magma_core.runs.events import Listener, no_listener
from magma_core.runs.loop import build_input, initial_memory
from magma_core.simulation.executor.engine import Engine
from magma_core.simulation.executor.snapshots import SlotSnapshot
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.store import scores as sc
from magma_core.store.generation_store import OPEN, PARKED, GenerationStore, NewSituation

__all__ = ["INVALID", "GenSettings", "Generator"]


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
        self.frontier = Frontier(settings.max_per_stage)
        self._wave: list[tuple[int, int]] = []  # (situation, candidate index) in the order asked
        self._arrived: dict[tuple[int, int], Executed] = {}  # answers not yet executed
        self._done: list[Executed] = []  # the wave's results, not yet stored
        self._tree: dict[int, TreeTask] = {}
        self._text_only: dict[int, list[bool]] = {}  # per tree: its stages' text-only flags
        self._nodes = 0  # candidates stored or in flight
        self.executed = 0
        self.successes = 0
        self.waves = 0
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

    def _bind(self, node: Situation) -> None:
        if isinstance(self.agent, TreeTraceAgent):
            self.agent.bind(node.id, node.tree)

    def _load(self) -> None:
        for t in self.store.trees(self.name):
            self._add_tree(t["tree"], self.trees.load(t["seed"], t["task"], t["vocabulary"]))
        found = resume(self.store, self.name, self.frontier, self._bind)
        self._next_situation, self._next_candidate = found.next_situation, found.next_candidate
        self._nodes, self.successes = found.candidates, found.successes

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
            start = time.perf_counter()
            snapshot = self.executor.snapshot(0, memory)
            self.timings["snapshot_s"] += time.perf_counter() - start
            agent_input = build_input(-1, self.executor.agent_view(0), memory).model_dump()
            node = self._new_situation(tree, 0, 0, 0, agent_input, snapshot)
            situation = NewSituation(node.id, tree, None, 0, 0, 0, OPEN, None, node.agent_input,
                                     self._serialise(node.snapshot))
            self.store.add_tree(self.name, tree, tree_task.seed, node.agent_input["tools"], situation,
                                task=tree_task.stored_task(), vocabulary=tree_task.stored_vocabulary())
            self.frontier.enqueue(node)

    def _new_situation(self, tree: int, stage: int, depth: int, idle: int, agent_input: dict[str, Any],
                       snapshot: SlotSnapshot | None) -> Situation:
        """A situation with the next id, for an input read from a slot (its id set here)."""
        sid = self._next_situation
        self._next_situation += 1
        agent_input["id"] = sid
        agent_input["num_outputs"] = self.settings.branches
        node = Situation(sid, tree, stage, depth, idle, agent_input, snapshot)
        self._bind(node)
        return node

    def _serialise(self, snapshot: SlotSnapshot | None) -> bytes:
        start = time.perf_counter()
        blob = self.executor.snapshot_to_bytes(snapshot)
        self.timings["snapshot_s"] += time.perf_counter() - start
        return blob

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
                if self._wave:
                    self._run_wave(pipeline)
                    self._store_wave()
                elif not self._release_parked():
                    break
        self.finish()
        return {**self.store.counts(self.name), "executed": self.executed, "waves": self.waves,
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
        """Ask every queued situation, breadth-first, while the node budget allows.

        A situation's input asks for its missing candidates at once (``num_outputs``; its
        key in the pipeline is ``(situation, indices)``); an agent that cannot give several
        (``single_output``) is asked once per candidate instead.
        """
        s = self.settings
        while len(self.frontier) and self._nodes < s.max_nodes:
            node = self.frontier.pop()
            free = [i for i in range(s.branches) if i not in node.stored and i not in node.pending]
            indices = free[:s.max_nodes - self._nodes]
            if not indices:
                continue
            node.pending.update(indices)
            self._nodes += len(indices)
            self._wave.extend((node.id, i) for i in indices)
            if self._single_output:
                for i in indices:
                    pipeline.ask((node.id, (i,)), AgentInput.model_validate(dict(node.agent_input, num_outputs=1)))
            else:
                pipeline.ask((node.id, tuple(indices)),
                             AgentInput.model_validate(dict(node.agent_input, num_outputs=max(indices) + 1)))

    def _run_wave(self, pipeline: SlotPipeline) -> None:
        """Execute this wave's candidates as their answers come: the one asked ``p``-th runs in
        slot ``p mod N``, each slot taking its own in the order asked, so what every slot has
        run before (which the simulator's contact caches remember) is the same on every run."""
        self.waves += 1
        n = self.executor.num_slots
        lanes = [deque(self._wave[slot::n]) for slot in range(n)]
        self._wave = []
        while any(lanes):
            batch: dict[int, Executed] = {}
            for slot, lane in enumerate(lanes):
                while lane and lane[0] in self._arrived:
                    item = self._arrived.pop(lane.popleft())
                    if item.output.status == "completed":
                        batch[slot] = item
                        break
                    self._done.append(item)  # not executable: held as invalid
            if batch:
                self._execute(batch)
                self._collect(pipeline, block=False)
            elif not any(lanes):  # the last answers could not be executed
                break
            elif pipeline.waiting:
                self._collect(pipeline, block=True)
            else:  # every answer came, yet a lane waits: a key was lost (a bug, not a hang)
                raise RuntimeError(f"generation {self.name!r}: no answer is awaited for {lanes}")

    def _collect(self, pipeline: SlotPipeline, block: bool) -> None:
        """Take the answers that arrived (waiting for one when ``block``). A candidate the
        agent did not answer becomes an invalid candidate (``missing_output``)."""
        start = time.perf_counter()
        answers = pipeline.answers(timeout=None if block else 0)
        self.timings["agent_wait_s"] += time.perf_counter() - start
        for answer in answers:
            sid, indices = answer.slot
            node = self.frontier.open[sid]
            got = list(answer.outputs)
            if len(indices) == 1 and len(got) == 1:  # asked once per candidate
                got = [got[0].model_copy(update={"candidate_index": indices[0]})]
            by_index = {o.candidate_index: o for o in got if o.candidate_index in indices}
            agent_input = AgentInput.model_validate(node.agent_input)
            for i in indices:
                output = by_index.get(i) or error_output(
                    "", agent_input, i, "missing_output", "the agent returned no output for this candidate")
                self._arrived[(sid, i)] = Executed(sid, output)

    # -- execution ---------------------------------------------------------------------------
    def _execute(self, batch: dict[int, Executed]) -> None:
        """Run one candidate per listed slot, all in the same simulator steps."""
        self.busy = len(batch)
        decisions: dict[int, Any] = {}
        start = time.perf_counter()
        for slot, item in batch.items():
            self.executor.restore(slot, self._snapshot(self.frontier.open[item.situation]))
            decisions[slot] = item.output.output.to_decision()
        self.timings["restore_s"] += time.perf_counter() - start
        start = time.perf_counter()
        outcomes = self.executor.submit(decisions)
        self.timings["submit_s"] += time.perf_counter() - start
        steps_of = getattr(self.executor, "steps_of", None)  # a recording engine (gen.control)
        for slot, item in batch.items():
            node = self.frontier.open[item.situation]
            result = read_slot(self.executor, slot, node, item.output, outcomes[slot], decisions[slot],
                               self.settings.limits, self._text_only[node.tree][node.stage],
                               self.settings.branches, self.timings)
            if steps_of is not None:
                result.control_steps = steps_of(slot)
            self._done.append(result)

    def _snapshot(self, node: Situation) -> SlotSnapshot:
        if node.snapshot is None:  # parked, resumed or closed: read back from the store
            start = time.perf_counter()
            node.snapshot = stored_snapshot(self.store, self.name, self.executor, node.id,
                                            self._tree[node.tree], self.trees.randomized)
            self.timings["restore_s"] += time.perf_counter() - start
        return node.snapshot

    # -- storing a wave, in its fixed order ---------------------------------------------------
    def _store_wave(self) -> None:
        done, self._done = sorted(self._done, key=lambda e: e.order), []
        for result in done:
            if result.verdict is None:
                self._store_invalid(result)
            else:
                self._store_executed(result)

    def _store_invalid(self, result: Executed) -> None:
        node = self.frontier.open[result.situation]
        error = result.output.error
        payload = {"code": error.code, "message": error.message, "component": error.component} if error else {}
        row = self._row(node, result.output, payload, None, INVALID, sc.ERROR, INVALID, None)
        self._save(node, result.output.candidate_index, row, None)

    def _store_executed(self, result: Executed) -> None:
        node, verdict = self.frontier.open[result.situation], result.verdict
        assert verdict is not None
        child = child_row = None
        open_child = True
        if result.child_input is not None:
            child = self._new_situation(node.tree, result.child_stage, node.depth + 1, result.idle,
                                        result.child_input, result.child_snapshot)
            if verdict.finished:
                open_child = self.frontier.admit(node.tree, node.stage, verdict.end)
            child_row = NewSituation(child.id, node.tree, self._next_candidate, child.stage, child.depth,
                                     child.idle, OPEN if open_child else PARKED, None, child.agent_input,
                                     self._serialise(child.snapshot))
        row = self._row(node, result.output, result.output.output.model_dump(), result.execution,
                        verdict.status, verdict.end, verdict.episode, child.id if child else None)
        self._save(node, result.output.candidate_index, row, child_row, result.control_steps)
        self.executed += 1
        self.successes += verdict.episode == "success"
        if child is not None:
            if open_child:
                self.frontier.enqueue(child)
            else:
                child.snapshot = None  # parked: reloaded from the store when released
                self.frontier.park(child, node.stage, verdict.end)

    def _row(self, node: Situation, output: AgentOutput, payload: dict[str, Any],
             execution: dict[str, Any] | None, status: str, end: str, episode: str, child: int | None) -> Any:
        return candidate_row(self._next_candidate, node, output, payload, execution, status, end, episode,
                             child, self._coached.get((node.id, output.candidate_index)))

    def _save(self, node: Situation, index: int, row: Any, child: NewSituation | None,
              control_steps: list[dict[str, Any]] | None = None) -> None:
        start = time.perf_counter()
        node.stored.add(index)
        node.pending.discard(index)
        complete = all(i in node.stored for i in range(self.settings.branches)) and not node.pending
        recorded = {} if control_steps is None else {"control_steps": control_steps}  # gen.control
        self.store.add_candidate(self.name, row, child, close_situation=complete, **recorded)
        self._next_candidate += 1
        self.timings["store_s"] += time.perf_counter() - start
        if complete:
            self.frontier.close(node.id)  # its snapshot is no longer needed in memory
        if self.coaching is not None:  # coaching hook: route terminal events, prove attempts
            self.coaching.observe(row, child)
        self.listener("candidate", node.tree, {"tree": node.tree, "status": row.status,
                                               "episode": row.episode_status,
                                               "nodes": self._next_candidate,
                                               "successes": self.successes, "busy": self.busy})

    def _release_parked(self) -> bool:
        """Open parked stage finishers where a stage has fewer than K continuations."""
        released = self.frontier.release()
        for node in released:
            self.store.set_situation_status(self.name, node.id, OPEN)
        return bool(released) and self._nodes < self.settings.max_nodes

    def _inject(self, pipeline: SlotPipeline) -> None:
        """Coaching hook (:mod:`magma_core.gen.coaching`): wait for the coach's answers, then
        ask for the coached candidates, within M (the first of the wave)."""
        if self.coaching is None:
            return
        self.coaching.drain()
        injections = self.coaching.take(self.settings.max_nodes - self._nodes)
        for injection in injections:
            place = injection.place
            node = self.frontier.open.get(place.id)
            if node is None:  # a closed situation: its snapshot is reloaded from the store
                node = self.frontier.open[place.id] = Situation(
                    place.id, place.tree, place.stage, place.depth, place.idle, place.agent_input,
                    stored=set(range(self.settings.branches)))
                self._bind(node)
            node.pending.add(injection.candidate_index)
            self._coached[(place.id, injection.candidate_index)] = injection.record
            self._nodes += 1
            self._wave.append((place.id, injection.candidate_index))
            pipeline.ask((place.id, (injection.candidate_index,)), AgentInput.model_validate(injection.agent_input))
