"""The run loop on the real engine and simulator: memory, end rules, agent errors, inputs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from magma_core.agents import TraceAgent
from magma_core.agents.base import Agent, NoAnswer
from magma_core.protocol.agent import AgentOutput, AgentRequest, AgentResponse
from magma_core.runs.agent_requests import Pacing
from magma_core.runs.loop import DECISION_CAP, NO_ACTION, TRACE_EXHAUSTED, LoopLimits, RunLoop
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore

pytestmark = pytest.mark.sim


class ScriptedAgent(Agent):
    """Answers each input with ``script(input)`` -> (decision dict | error dict, memory)."""

    def __init__(self, script) -> None:
        self.script = script
        self.inputs: list[Any] = []

    def respond(self, request: AgentRequest) -> AgentResponse:
        outputs = []
        for agent_input in request.inputs:
            self.inputs.append(agent_input)
            answer, memory = self.script(agent_input)
            common = dict(request_id=request.request_id, source_id=agent_input.id,
                          candidate_index=0, memory=memory)
            if "code" in answer:
                outputs.append(AgentOutput(status="error", error=answer, **common))
            else:
                outputs.append(AgentOutput(status="completed", output=answer, **common))
        return AgentResponse(outputs)


@pytest.fixture(scope="module")
def pick_place():
    task = load_preset("cube.PickPlace")()
    with Executor(task, num_slots=2, seed=0) as executor:
        yield task, executor


def _run(task, executor, agent, tmp_path, episodes=2, limits=None):
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "cube.PickPlace", {})
    summaries = RunLoop(task, agent, executor, store, "r", episodes=episodes, seed=10,
                        limits=limits).run()
    return store, summaries


def test_trace_agent_memory_is_carried_between_decisions(pick_place, tmp_path):
    task, executor = pick_place
    store, summaries = _run(task, executor, TraceAgent(task.perfect_trace()), tmp_path, episodes=3)
    assert [s.status for s in summaries] == ["success"] * 3
    assert sorted(s.episode for s in summaries) == [0, 1, 2]
    assert {s.seed for s in summaries} == {10, 11, 12}
    record = store.episode_record("r", 2)
    assert record["agent_memory"]["trace_cursor"] == 3  # pick, place, answer


def test_memory_returned_by_the_agent_comes_back(pick_place, tmp_path):
    task, executor = pick_place

    def script(agent_input):
        seen = agent_input.memory.get("turn", 0)
        return {"say": "thinking"}, {"turn": seen + 1}

    agent = ScriptedAgent(script)
    _, summaries = _run(task, executor, agent, tmp_path, episodes=1)
    assert [i.memory.get("turn", 0) for i in agent.inputs] == [0, 1, 2]
    assert summaries[0].status == NO_ACTION and summaries[0].decisions == 3


def test_decision_cap_ends_an_episode_that_keeps_calling(pick_place, tmp_path):
    task, executor = pick_place
    agent = ScriptedAgent(lambda i: ({"tool_calls": [
        {"name": "pick", "arguments": {"object": "moon"}, "target_robot_name": "panda"}]},
        {}))
    store, summaries = _run(task, executor, agent, tmp_path, episodes=1,
                            limits=LoopLimits(max_decisions=3))
    # an unknown object is a bad call; the stage budget (max 4) is not reached in 3 calls
    assert summaries[0].status == DECISION_CAP and summaries[0].decisions == 3
    calls = store.episode_record("r", 0)["steps"][0]["calls"]
    assert calls[0]["failure_flag"] == "bad_call" and "Unknown object" in calls[0]["message"]
    # the reason names the failed calls (the first two, with their messages)
    reason = summaries[0].reason
    assert reason.startswith("reached the cap of 3 decisions; 3 failed calls: "
                             "panda.pick(object='moon'): Unknown object 'moon'")
    assert reason.endswith("(+1 more)") and reason.count("panda.pick(object='moon')") == 2


def test_an_exceeded_budget_names_the_failed_calls(pick_place, tmp_path):
    task, executor = pick_place
    agent = ScriptedAgent(lambda i: ({"tool_calls": [
        {"name": "pick", "arguments": {"object": "moon"}, "target_robot_name": "panda"}]}, {}))
    _, summaries = _run(task, executor, agent, tmp_path, episodes=1)
    assert summaries[0].status == "exceeded"
    assert summaries[0].reason.startswith(
        "Stage 0 reached its maximum of 4 tool calls; 4 failed calls: "
        "panda.pick(object='moon'): Unknown object 'moon'")


def test_a_trace_with_a_misspelt_argument_names_the_failed_call(pick_place, tmp_path):
    from magma_core.simulation.data_structures import Decision, ToolCall

    task, executor = pick_place
    decisions = task.perfect_trace().decisions()
    decisions[1] = Decision(tool_calls=[ToolCall("place", {"zone": "zone_a"}, "panda")])
    _, summaries = _run(task, executor, TraceAgent(decisions), tmp_path, episodes=1)
    assert summaries[0].status == TRACE_EXHAUSTED
    assert summaries[0].reason.endswith(
        "; 1 failed call: panda.place(zone='zone_a'): Unknown arguments: zone. Missing arguments: area.")


def test_a_trace_that_runs_out_ends_the_episode_trace_exhausted(pick_place, tmp_path):
    """Without its closing message the trace has no decision for the text-only stage: the
    episode ends there (not after dozens of empty decisions at the cap)."""
    task, executor = pick_place
    decisions = [d for d in task.perfect_trace().decisions() if d.tool_calls]  # no answer
    store, summaries = _run(task, executor, TraceAgent(decisions), tmp_path, episodes=1)
    summary = summaries[0]
    assert summary.status == TRACE_EXHAUSTED and summary.decisions == len(decisions) + 1
    assert summary.stages_passed == 1
    assert "reference trace ran out" in summary.reason and "all were replayed" in summary.reason
    assert store.episodes("r")[0].reason == summary.reason


def test_trace_user_events_are_checked_against_the_stage_instructions(pick_place):
    from magma_core.simulation.tasks import PerfectTrace, UserEvent
    from magma_core.simulation.tasks.perfect_trace import user_event_mismatches

    task, _ = pick_place
    trace = task.perfect_trace()
    assert user_event_mismatches(trace, list(task.stages)) == []
    edited = PerfectTrace([UserEvent("Put the cube in zone B."),
                           *[e for e in trace.events if not isinstance(e, UserEvent)]])
    problems = user_event_mismatches(edited, list(task.stages))
    assert problems and "UserEvent 0 says 'Put the cube in zone B.'" in problems[0]
    assert "stage 1 instructs" in problems[0]


def test_agent_errors_are_recorded_and_count_as_no_action(pick_place, tmp_path):
    task, executor = pick_place
    agent = ScriptedAgent(lambda i: ({"code": "invalid_response", "message": "not JSON"}, {}))
    store, summaries = _run(task, executor, agent, tmp_path, episodes=1)
    assert summaries[0].status == NO_ACTION
    record = json.dumps(store.episode_record("r", 0))
    assert "invalid_response" in record and "not JSON" in record


def test_delayed_input_carries_the_last_status_and_the_new_instruction(tmp_path):
    task = load_preset("sorting.Interruption")()
    trace_agent = TraceAgent(task.perfect_trace())
    seen: list[str] = []

    class Spy(Agent):
        def respond(self, request):
            seen.extend(i.instruction.content for i in request.inputs)
            return trace_agent.respond(request)

    with Executor(task, num_slots=1, seed=0) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", "sorting.Interruption", {})
        [summary] = RunLoop(task, Spy(), executor, store, "r", episodes=1, seed=0).run()
    assert summary.status == "success"
    interruption = [s for s in seen if "Wait, first put the green cube" in s]
    assert len(interruption) == 1
    assert "place succeed" in interruption[0]  # the status of the batch before it


class Unreachable(Agent):
    """An agent that never answers: every input gets ``NoAnswer`` (as HttpAgent on a 503)."""

    concurrent = True

    def __init__(self) -> None:
        self.asked = 0

    def respond(self, request):  # pragma: no cover - the loop uses answer()
        raise AssertionError("not used")

    def answer(self, request):
        self.asked += len(request.inputs)
        return {i.id: NoAnswer("timeout", "no reply within 5 s") for i in request.inputs}


def test_an_unreachable_agent_stops_the_run_and_loses_no_episode(pick_place, tmp_path):
    from magma_core.runs.loop import AgentOutage

    task, executor = pick_place
    down = Unreachable()
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "cube.PickPlace", {})
    pacing = Pacing(retry_backoff_s=0.05, max_backoff_s=0.1, max_outage_s=0.5)
    loop = RunLoop(task, down, executor, store, "r", episodes=3, seed=0, pacing=pacing)
    with pytest.raises(AgentOutage, match="could not be reached for any of 2 slot.*timeout: no reply"):
        loop.run()
    assert store.finished_episodes("r") == set()  # nothing stored as the agent's choice
    assert down.asked > 2 * 2  # the same two inputs, retried with backoff
    summaries = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                        episodes=3, seed=0).run()
    assert sorted(s.episode for s in summaries) == [0, 1, 2]
    assert all(s.status == "success" for s in summaries)


def test_a_short_outage_is_retried_without_a_trace(pick_place, tmp_path):
    task, executor = pick_place
    trace = TraceAgent(task.perfect_trace())
    failures = iter([True, False] * 20)

    class Flaky(Agent):
        def respond(self, request):
            return trace.respond(request)

        def answer(self, request):
            if next(failures):
                return {i.id: NoAnswer("transport_error", "reset by peer") for i in request.inputs}
            return super().answer(request)

    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "cube.PickPlace", {})
    summaries = RunLoop(task, Flaky(), executor, store, "r", episodes=2, seed=10,
                        pacing=Pacing(retry_backoff_s=0.01)).run()
    assert [s.status for s in summaries] == ["success", "success"]
    assert all(s.decisions == 3 for s in summaries)  # the failed asks are not decisions


def test_an_error_the_agent_sends_itself_is_a_decision_not_an_outage(pick_place, tmp_path):
    task, executor = pick_place
    agent = ScriptedAgent(lambda i: ({"code": "timeout", "message": "my model timed out"}, {}))
    store, summaries = _run(task, executor, agent, tmp_path, episodes=2)
    assert [s.status for s in summaries] == [NO_ACTION, NO_ACTION]
    assert all(s.decisions == 3 for s in summaries)
    assert "my model timed out" in json.dumps(store.episode_record("r", 0))


def test_a_judge_without_verdict_stops_the_run_and_stores_nothing(tmp_path):
    from magma_core.judge import Verdict
    from magma_core.runs.loop import AgentOutage

    class DownJudge:
        def judge(self, rule, question, answer):
            return Verdict(ok=False, reason="", error="transport_error: connection refused")

    task = load_preset("sorting.Question")()
    with Executor(task, num_slots=1, seed=0, judge=DownJudge()) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", "sorting.Question", {})
        loop = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                       episodes=1, seed=0)
        with pytest.raises(AgentOutage, match="connection refused"):
            loop.run()
    assert store.finished_episodes("r") == set()  # the same command resumes it


def test_the_first_input_carries_the_tasks_memory_and_history(pick_place, tmp_path):
    from magma_core.simulation.data_structures import SituationInit

    task, executor = pick_place
    seen = []

    def script(agent_input):
        seen.append(agent_input.memory)
        return {"say": "hm"}, {"mine": True}

    original = task.situation_init
    task.situation_init = SituationInit(original.attributes, memory={"rules": ["be careful"]},
                                        history=[{"role": "user", "content": "earlier"}])
    try:
        _run(task, executor, ScriptedAgent(script), tmp_path, episodes=1)
    finally:
        task.situation_init = original
    assert seen[0] == {"rules": ["be careful"],
                       "history": [{"role": "user", "content": "earlier"}]}
    assert seen[1] == {"mine": True}  # then the memory the agent returned


def test_the_idle_count_restarts_after_a_tool_call(pick_place, tmp_path):
    task, executor = pick_place
    turn = {"n": 0}

    def script(agent_input):
        turn["n"] += 1  # say, say, detect (a tool call), say, say, say -> ends on the 6th
        if turn["n"] == 3:
            return {"tool_calls": [{"name": "detect_objects", "arguments": {},
                                    "target_robot_name": "panda"}]}, {}
        return {"say": "thinking"}, {}

    _, summaries = _run(task, executor, ScriptedAgent(script), tmp_path, episodes=1)
    assert summaries[0].status == NO_ACTION and summaries[0].decisions == 6


def test_each_episode_waits_only_for_its_own_requests(pick_place, tmp_path):
    """Two episodes side by side, each slot asking on its own: slot 0's first request is held
    until slot 1 has sent all three of its requests (pick, place, answer), then 1 s more. Slot
    1 must finish its episode meanwhile, and its agent wait, which lies inside slot 0's first
    wait, must stay below slot 0's. In lockstep slot 1 could not send its second request while
    slot 0's first was out: the hold would time out and the order check fail. Nothing here
    depends on how fast a loaded machine schedules threads."""
    import threading
    import time

    task, executor = pick_place
    trace = TraceAgent(task.perfect_trace())
    sent = {0: 0, 1: 0}
    slot1_done = threading.Event()
    order: list[str] = []
    lock = threading.Lock()

    class Held(Agent):
        concurrent = True

        def respond(self, request):
            slots = [i.id for i in request.inputs]
            with lock:
                for slot in slots:
                    sent[slot] += 1
                if sent[1] == 3:
                    slot1_done.set()
            if slots == [0] and sent[0] == 1:
                released = slot1_done.wait(timeout=20)
                order.append("slot 0 released" if released else "slot 0 timed out")
                time.sleep(1.0)
            elif slots == [1] and sent[1] == 3:
                order.append("slot 1 last request")
            return trace.respond(request)

    store, summaries = _run(task, executor, Held(), tmp_path, episodes=2)
    assert [s.status for s in summaries] == ["success", "success"]
    assert order[:2] == ["slot 1 last request", "slot 0 released"]
    by_slot = {s.episode: s.agent_latency_s for s in summaries}  # episode k ran in slot k
    assert by_slot[0] >= 1.0
    assert by_slot[1] < by_slot[0]  # never charged with slot 0's held request


def test_the_attempts_of_a_resent_input_count_in_its_decision(pick_place, tmp_path):
    task, executor = pick_place
    trace = TraceAgent(task.perfect_trace())
    failures = iter([True] + [False] * 20)
    step = {"usage": {"total_tokens": 7}, "attempts": 3, "latency_s": 1.0,
            "request": {"messages": []}, "output_raw": "", "attempt_log": [{"outcome": "timeout"}] * 3}

    class Flaky(Agent):
        def respond(self, request):
            if next(failures):
                return AgentResponse([
                    AgentOutput(request_id=request.request_id, source_id=i.id, candidate_index=0,
                                status="error", memory=i.memory, internal_steps=[step],
                                error={"code": "timeout", "message": "no reply"})
                    for i in request.inputs])
            return trace.respond(request)

    store, _ = _run(task, executor, Flaky(), tmp_path, episodes=1)
    first = store.episode_record("r", 0)["agent"]["per_decision"][0]
    assert first["attempts"] == 3 and first["total_tokens"] == 7 and first["decision"] == 1
    assert first["model_calls"][0]["attempt_log"] == [{"outcome": "timeout"}] * 3


def test_an_unreadable_judge_reply_is_that_episodes_judge_error_and_the_run_goes_on(tmp_path):
    """A judge that answers (over real HTTP) without a verdict: each episode ends
    ``judge_error`` with the reply in its reason, is stored, and the next one runs."""
    from agents.agent_helpers import FakeOpenAI, completion
    from magma_core.judge import OpenAIJudge

    server = FakeOpenAI()
    server.script = [completion("Looks right to me!")]  # never JSON
    judge = OpenAIJudge(server.base_url, "judge", retries=0, backoff=0.01, timeout=5.0, max_attempts=2)
    task = load_preset("sorting.Question")()
    try:
        with Executor(task, num_slots=1, seed=0, judge=judge) as executor:
            store = RunStore(tmp_path / "magma.db")
            store.open_run("r", "sorting.Question", {})
            summaries = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                                episodes=2, seed=0).run()
    finally:
        judge.close()
        server.close()
    assert [s.status for s in summaries] == ["judge_error", "judge_error"]
    assert store.finished_episodes("r") == {0, 1}
    assert "Looks right to me!" in store.episode_record("r", 1)["reason"]
