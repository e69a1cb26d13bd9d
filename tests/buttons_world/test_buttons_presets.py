"""Every buttons preset is solved by its perfect trace with every stage OPTIMAL, through the
run loop (real simulator, real store, a loopback judge) and through ``magma run``."""

from __future__ import annotations

import json

import pytest

from agents.agent_helpers import FakeOpenAI, completion
from cli.conftest import magma
from magma_core.agents import TraceAgent
from magma_core.judge import OpenAIJudge
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import get_scenario, load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore

pytestmark = pytest.mark.sim

PRESETS = [f"buttons.{name}" for name in get_scenario("buttons").presets]


@pytest.fixture(scope="module")
def judge_server():
    """A loopback judge accepting an answer that mentions the red button."""
    server = FakeOpenAI()

    def verdict(body):
        ok = "never press the red button" in json.dumps(body["messages"]).lower()
        return completion(json.dumps({"verdict": ok, "explanation": "checked"}))

    server.script = [verdict]
    yield server
    server.close()


def test_the_scenario_lists_its_presets():
    assert sorted(PRESETS) == [
        "buttons.LightOut", "buttons.RedRule", "buttons.Sequence", "buttons.TwoRobots"
    ]


@pytest.mark.parametrize("preset", PRESETS)
def test_perfect_trace_is_optimal(preset, judge_server, tmp_path):
    task = load_preset(preset)()
    judge = OpenAIJudge(judge_server.base_url, "judge-model", api_key_env="NO_SUCH_KEY_SET")
    with Executor(task, num_slots=2, seed=0, judge=judge) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", preset, {})
        summaries = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                            episodes=2, seed=0).run()
        record = executor.record(0)
    assert len(summaries) == 2
    for s in summaries:
        assert s.status == "success", store.episode_record("r", s.episode)["reason"]
        assert s.stages_passed == s.stages_total == s.optimal
    calls = [c for step in record.steps for c in step.calls]
    assert calls and all(c.ok for c in calls)


def test_a_wrong_order_fails_the_sequence_for_good():
    from magma_core.simulation.data_structures import Decision, ToolCall

    task = load_preset("buttons.Sequence")()
    with Executor(task, num_slots=1, seed=0) as executor:
        first = executor.submit({0: Decision(tool_calls=[ToolCall("press", {"button": "blue"}, "panda")])})
    assert first[0].status == "failed" and first[0].verification == -1


def test_pressing_red_breaks_the_rule():
    from magma_core.simulation.data_structures import Decision, ToolCall
    from magma_scenarios.buttons.presets import ALL_LIGHTS_TEXT, ButtonsStage, RedRule

    task = RedRule(stages=[s for s in RedRule.stages if isinstance(s, ButtonsStage)])
    assert task.stages[0].stage_input.instruction.get_content() == ALL_LIGHTS_TEXT
    with Executor(task, num_slots=1, seed=0) as executor:
        out = executor.submit({0: Decision(tool_calls=[ToolCall("press", {"button": "red"}, "panda")])})
    assert out[0].calls[0].ok and out[0].status == "failed"


@pytest.mark.parametrize("preset", ["buttons.Sequence", "buttons.TwoRobots"])
def test_magma_run_with_the_trace_agent(preset, tmp_path):
    run = magma("run", preset, "--agent", "trace", "--episodes", "2", "--slots", "2",
                "--out", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = json.loads((tmp_path / "out" / f"{preset}.summary.json").read_text())["totals"]
    assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"]
