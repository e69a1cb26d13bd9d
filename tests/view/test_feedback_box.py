"""The "engine feedback → agent" box shows what the model received, in Debian's headless
Chromium: two runs of the OpenAI-compatible agent against a loopback chat-completions server
on ``cube.PickPlace`` (real engine and simulator), one feeding the engine's reports as
``tool`` messages, one as ``user`` messages (``report_role``). The box holds the messages as
sent with the run's report role (the agent's plain-text report, not the engine's JSON),
checked against the stored request and against the report the engine stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magma_core.agents.chat_prompt import plain_report
from magma_core.store import RunStore

from .conftest import ViewerServer
from .test_browser import expect

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]

ROLES = ("tool", "user")


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agents.agent_helpers import FakeOpenAI, completion, tool_call
    from magma_core.runs.assembly import build_run_agent
    from magma_core.runs.loop import RunLoop
    from magma_core.scenarios import load_preset
    from magma_core.simulation.executor import Executor

    folder = tmp_path_factory.mktemp("feedback-store")
    task = load_preset("cube.PickPlace")()
    for role in ROLES:
        server = FakeOpenAI()
        server.script = [
            completion(tool_calls=[tool_call("pick", {"object": "cube"})]),
            completion(tool_calls=[tool_call("place", {"area": "zone_a"})]),
            completion("The cube is in zone A."),
        ]
        try:
            agent = build_run_agent(f"openai:fake-model@{server.base_url}", task, check=False,
                                    agent_options={"report_role": role})
            with RunStore(folder / "magma.db") as store:
                store.open_run(f"as-{role}", "cube.PickPlace", {"agent": "openai:fake-model", "episodes": 1,
                                                              "agent_options": {"report_role": role}})
                with Executor(task, num_slots=1, seed=0) as executor:
                    RunLoop(task, agent, executor, store, f"as-{role}", episodes=1, seed=3).run()
            agent.close()
        finally:
            server.close()
    return folder


@pytest.fixture(scope="module")
def viewer(store_folder: Path):
    with ViewerServer(store_folder) as server:
        yield server


@pytest.mark.parametrize("role", ROLES)
def test_the_feedback_box_shows_the_messages_as_the_model_received_them(page, viewer, store_folder, role):
    with RunStore(store_folder / "magma.db") as store:
        record = store.episode_record(f"as-{role}", 0)
    steps, per_decision = record["steps"], record["agent"]["per_decision"]
    page.goto(viewer.url + f"/#/runs/as-{role}/episodes/0")
    turns = page.get_by_test_id("turn")
    expect(turns).to_have_count(len(steps))
    env_steps = [i for i, s in enumerate(steps) if any(x["kind"] == "env" for x in s["inputs"])]
    assert env_steps, "no decision answered an engine report"
    for i in env_steps:
        engine = next(x["content"] for x in steps[i]["inputs"] if x["kind"] == "env")
        assert engine.startswith("{")  # the engine's report is JSON; the model got plain text
        report = plain_report(engine)
        messages = per_decision[i]["model_calls"][-1]["request"]["messages"]
        if role == "user":  # the tool message points to the user message that carries the report
            expected = f"[tool] (reported in the next message)\n[user] [environment] {report}"
            assert messages[-2:] == [{"role": "tool", "tool_call_id": "call_a", "content": "(reported in the next message)"},
                                     {"role": "user", "content": f"[environment] {report}"}]
            shown_roles = "tool + user messages"
        else:
            expected = report
            assert messages[-1] == {"role": "tool", "tool_call_id": "call_a", "content": report}
            shown_roles = "tool message"
        box = turns.nth(i).get_by_test_id("feedback-sent")
        expect(box.locator(".text")).to_have_text(expected)
        expect(box.get_by_test_id("feedback-role")).to_contain_text(f"as the model received it: {shown_roles}")
        assert "{" not in box.locator(".text").inner_text()
        report_json = box.get_by_test_id("engine-report")
        expect(report_json).to_be_hidden()  # the engine's JSON stays one click away
        box.locator("details summary").click()
        expect(report_json).to_contain_text(f"infos: {json.loads(engine)['infos']}".strip())
    first = turns.nth(0)  # the user's words: no report, shown as the user gave them
    expect(first.get_by_test_id("feedback-sent")).to_have_count(0)
    expect(first.locator(".msg.user .text")).to_have_text(steps[0]["inputs"][0]["content"])
