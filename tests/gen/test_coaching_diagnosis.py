"""Coaching without a simulator: terminal events, stage trajectories and diagnosis on
hand-built trees, the trace coach's choice of the root cause, the skip rules and budgets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from magma_core.gen.coaching.budgets import CoachingBudget
from magma_core.gen.coaching.coaches import CoachContext, ask_coach, build_coach, build_request
from magma_core.gen.coaching.opportunities import (
    Node,
    Place,
    TreeIndex,
    coaching_type,
    skip_reason,
    stage_trajectory,
    terminal_event,
)
from magma_core.gen.coaching.trace_coach import TraceCoach, split_reference
from magma_core.simulation.data_structures.decisions import ToolCall
from magma_core.simulation.tasks.perfect_trace import MessageEvent, PerfectTrace, ToolCallEvent
from magma_core.user_error import UserError

ROBOT = {"known_robots": ["panda"]}


def call(name, **arguments):
    return {"name": name, "arguments": arguments, "target_robot_name": "panda"}


def decision(*calls, say=""):
    return {"say": say, "tool_calls": list(calls)}


def execution(success="ONGOING", state="OPTIMAL", ok=True):
    return {"stage_success": success, "stage_state": state, "status": "running", "message": "",
            "calls": [{"tool": "pick", "ok": ok, "message": "" if ok else "The gripper holds an object"}]}


def chain(steps, *, stage_of=None):
    """A one-branch tree: situation i --candidate i--> situation i+1; ``steps`` are
    (decision, execution, end, episode) per candidate; ``stage_of(i)`` its stage (0)."""
    index = TreeIndex()
    stage_of = stage_of or (lambda i: 0)
    for i, (dec, exe, end, episode) in enumerate(steps):
        index.add_place(Place(i, 0, stage_of(i), i - 1 if i else None,
                              {"id": i, "instruction": {"type": "env", "content": f"s{i}"},
                               "attributes": ROBOT, "memory": {}}))
        index.add_node(Node(i, i, 0, stage_of(i), dec, exe, end, episode,
                            next_situation=i + 1 if episode == "running" else None))
    return index


PICK_A, PLACE_A, PICK_B, PLACE_B = (call("pick", object="a"), call("place", area="zone_a"),
                                    call("pick", object="b"), call("place", area="zone_a"))
TRACE = PerfectTrace([ToolCallEvent([ToolCall("pick", {"object": "a"})]),
                      ToolCallEvent([ToolCall("place", {"area": "zone_a"})]),
                      ToolCallEvent([ToolCall("pick", {"object": "b"})]),
                      ToolCallEvent([ToolCall("place", {"area": "zone_a"})]),
                      MessageEvent("both are in zone_a")])


def stage(target, text_only=False):
    return SimpleNamespace(target_tool_calls=target, is_text_only=lambda: text_only,
                           stage_goal_description="goal")


STAGES = [stage(2), stage(2), stage(0, text_only=True)]


def test_terminal_events_are_the_predecessors_five():
    ok = Node(0, 0, 0, 0, decision(PICK_A), execution(), "ongoing", "running")
    assert terminal_event(ok) is None
    assert terminal_event(Node(0, 0, 0, 0, decision(PICK_A), execution("FAILED"), "error", "failed")) == "failure"
    assert terminal_event(Node(0, 0, 0, 0, decision(PICK_A), execution(state="EXCEEDED"), "error",
                               "exceeded")) == "exceeded"
    assert terminal_event(Node(0, 0, 0, 0, decision(say="hm"), execution(), "error", "no_action")) == "no_action"
    assert terminal_event(Node(0, 0, 0, 0, None, None, "error", "invalid", error={"code": "x"})) == "format_error"
    assert terminal_event(Node(0, 0, 0, 0, decision(PLACE_A), execution("FINISH", "ACCEPTABLE"),
                               "suboptimal", "running")) == "finish_suboptimal"
    assert terminal_event(Node(0, 0, 0, 0, decision(PICK_A), execution(), "ongoing", "decision_cap")) is None
    assert coaching_type("failure", text_only=True) == "failure:text_only_rewrite"
    assert coaching_type("exceeded") == "exceeded:diagnosis"


def test_the_trajectory_is_the_terminal_stage_only():
    index = chain([(decision(PICK_A), execution(), "ongoing", "running"),
                   (decision(PLACE_A), execution("FINISH"), "optimal", "running"),
                   (decision(PICK_A), execution(ok=False), "ongoing", "running"),
                   (decision(PICK_B), execution(state="EXCEEDED"), "error", "exceeded")],
                  stage_of=lambda i: 0 if i < 2 else 1)
    trajectory = stage_trajectory(index, 3)
    assert trajectory.candidates == [2, 3]
    assert trajectory.diagnosable == [True, True]


def test_the_root_cause_is_the_first_decision_off_the_reference_not_the_last():
    # stage 0: pick a (reference), pick b (wrong: should place), place (exceeded)
    index = chain([(decision(PICK_A), execution(), "ongoing", "running"),
                   (decision(PICK_B), execution(ok=False), "ongoing", "running"),
                   (decision(PLACE_A), execution(state="EXCEEDED"), "error", "exceeded")])
    trajectory = stage_trajectory(index, 2)
    request = build_request("g", "g:0", "exceeded", trajectory, "goal", "exceeded")
    assert request.target_step_id is None  # three diagnosable decisions: the coach chooses
    assert [p.id for p in request.reinjection_points] == ["replace:0", "replace:1", "recovery:1", "replace:2"]
    reply = ask_coach(TraceCoach(), request, CoachContext(0, STAGES, TRACE))
    assert reply.response.status == "corrected"
    assert reply.response.diagnosis.step_id == 1
    points = {p.reinjection_point_id: p.extra_keys for p in reply.response.proposals}
    assert set(points) == {"replace:1", "recovery:1"}  # the failed call can also be recovered from
    assert points["replace:1"]["decision"]["tool_calls"][0]["name"] == "place"
    assert points["replace:1"]["reference_index"] == 1


def test_one_diagnosable_decision_is_diagnosed_without_the_coach_choosing():
    index = chain([(decision(PICK_A), execution(), "ongoing", "running"),
                   (decision(PICK_B), execution("FAILED"), "error", "failed")])
    index.nodes[0].coaching = {"request": 0, "role": "fixed", "type": "failure:diagnosis"}
    trajectory = stage_trajectory(index, 1)
    assert trajectory.diagnosable == [False, True]  # before and at the coached repair: not diagnosable
    request = build_request("g", "g:1", "failure", trajectory, "goal", "stage failed")
    assert request.target_step_id == 1 and request.diagnosis.step_id == 1
    assert "failed" in request.diagnosis.explanation
    reply = ask_coach(TraceCoach(), request, CoachContext(0, STAGES, TRACE))
    assert reply.response.diagnosis.step_id == 1


def test_a_stage_on_the_reference_is_abandoned_not_repaired():
    index = chain([(decision(PICK_A), execution(), "ongoing", "running"),
                   (decision(PLACE_A), execution("FAILED"), "error", "failed")])
    request = build_request("g", "g:2", "failure", stage_trajectory(index, 1), "goal", "")
    reply = ask_coach(TraceCoach(), request, CoachContext(0, STAGES, TRACE))
    assert reply.response.status == "abandoned" and reply.response.reason


def test_skip_rules_no_repeat_of_a_type_and_no_second_repair_of_a_faulty_decision():
    index = chain([(decision(PICK_A), execution(), "ongoing", "running"),
                   (decision(PICK_B), execution(), "ongoing", "running"),
                   (decision(PLACE_A), execution(state="EXCEEDED"), "error", "exceeded")])
    trajectory = stage_trajectory(index, 2)
    assert skip_reason(index, trajectory, "exceeded:diagnosis", set()) is None
    assert "already diagnosed" in skip_reason(index, trajectory, "exceeded:diagnosis", {1})
    index.nodes[1].coaching = {"request": 0, "role": "fixed", "type": "exceeded:diagnosis"}
    again = stage_trajectory(index, 2)
    assert "already applied" in skip_reason(index, again, "exceeded:diagnosis", set())
    index.nodes[2].coaching = {"request": 1, "role": "fixed", "type": "failure:diagnosis"}
    assert "nothing diagnosable" in skip_reason(index, stage_trajectory(index, 2), "x", set())


def test_budgets_cap_pending_and_unproven_per_stage():
    budget = CoachingBudget(max_pending=1, max_unproven=2)
    key = (0, 3)
    assert budget.refusal(key) is None
    budget.asked(key, 0)
    assert "pending" in budget.refusal(key)
    assert budget.refusal((0, 4)) is None and budget.refusal((1, 3)) is None  # per stage of a tree
    budget.answered(key, 0, corrected=True)
    budget.asked(key, 1)
    budget.answered(key, 1, corrected=True)
    assert "unproven" in budget.refusal(key)
    budget.settled(key, 0)  # proven or refuted
    assert budget.refusal(key) is None
    budget.asked(key, 2)
    budget.answered(key, 2, corrected=False)  # abandoned: frees its place at once
    assert budget.refusal(key) is None


def test_the_reference_splits_by_stage_budgets_for_a_generated_task():
    from magma_core.scenarios import load_target

    task = load_target("sorting.LongSorting")().generate(0)
    decisions = task.perfect_trace().decisions()
    split = split_reference(decisions, task.stages)
    assert len(split) == len(task.stages)
    assert sorted(i for part in split for i in part) == list(range(len(decisions)))
    for part, st in zip(split, task.stages, strict=True):
        calls = sum(len(decisions[i].tool_calls) for i in part)
        if st.is_text_only():
            assert [decisions[i].say for i in part] and not calls
        else:
            assert calls == st.target_tool_calls


def test_a_bad_coach_spec_is_one_user_error():
    with pytest.raises(UserError, match="unknown coach"):
        build_coach("oracle")
    with pytest.raises(UserError, match="openai"):
        build_coach("trace", {"temperature": 0.1})


def test_the_manager_keeps_the_budgets_and_proves_only_on_a_validated_finish(tmp_path):
    import threading

    from magma_core.gen.coaching import Coaching, CoachingSettings
    from magma_core.store import GenerationStore
    from magma_core.store.generation_store import CandidateRow

    gate = threading.Event()

    class SlowCoach(TraceCoach):
        name = "slow"

        def coach(self, request, context):
            gate.wait(10)
            return super().coach(request, context)

    def row(cid, situation, index, dec, exe, end, episode, coaching=None):
        return CandidateRow(cid, situation, index, 0, 0, "completed", dec, {}, [], exe, end, end, episode,
                            None, None, coaching)

    def root(sid):
        return SimpleNamespace(id=sid, tree=0, stage=0, parent=None, depth=0, idle=0,
                               agent_input={"id": sid, "instruction": {"type": "user", "content": "go"},
                                            "attributes": ROBOT, "memory": {}})

    store = GenerationStore(tmp_path / "magma.db")
    store.open_generation("g", "x", {})
    coach = SlowCoach()
    coaching = Coaching(coach, CoachingSettings(coach, max_pending=1, max_unproven=1), store, "g",
                        lambda tree: CoachContext(tree, STAGES, TRACE), branches=2)
    coaching.load()
    coaching.add_place(root(0))
    coaching.add_place(root(10))
    failed = execution("FAILED")
    coaching.observe(row(0, 0, 0, decision(PICK_B), failed, "error", "failed"), None)
    coaching.observe(row(1, 0, 1, decision(PLACE_A), failed, "error", "failed"), None)
    rows = store.coaching("g")
    assert [r.status for r in rows] == ["pending", "skipped"] and "pending" in rows[1].reason
    gate.set()
    coaching.wait(10)
    injections = coaching.take(5)
    assert [(i.place.id, i.candidate_index, i.record["role"]) for i in injections] == [(0, 2, "fixed")]
    assert injections[0].agent_input["extra_keys"]["coaching"]["decision"]["tool_calls"][0]["name"] == "pick"
    coaching.observe(row(4, 10, 0, decision(PICK_B), failed, "error", "failed"), None)
    assert "unproven" in store.coaching("g")[-1].reason  # the first repair is not validated yet
    # the coached candidate runs but does not finish the stage: still unproven, not a success
    coaching.observe(row(5, 0, 2, decision(PICK_A), execution(), "ongoing", "running", injections[0].record), None)
    assert store.coaching("g")[0].outcome == "unproven"
    coaching.observe(row(6, 0, 3, decision(PICK_A), execution("FINISH"), "optimal", "running",
                         dict(injections[0].record)), None)
    assert store.coaching("g")[0].outcome == "proven"  # validated: the budget is free again
    coaching.observe(row(7, 10, 1, decision(PICK_B), failed, "error", "failed"), None)
    coaching.wait(10)
    assert store.coaching("g")[-1].status == "corrected"
    coaching.close()
    store.close()
