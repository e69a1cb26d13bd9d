"""Every built-in preset is solved by its own perfect trace with every stage OPTIMAL."""

from __future__ import annotations

import json

import pytest

from agents.agent_helpers import FakeOpenAI, completion
from magma_core.agents import TraceAgent
from magma_core.judge import OpenAIJudge
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import get_scenario, load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore

pytestmark = pytest.mark.sim

PRESETS = [f"{sid}.{name}" for sid in ("cube", "sorting") for name in get_scenario(sid).presets]


@pytest.fixture(scope="module")
def judge_server():
    """A loopback OpenAI-compatible judge that checks the answer names the expected zone."""
    server = FakeOpenAI()

    def verdict(body):
        prompt = json.dumps(body["messages"])
        ok = "blue cube is in zone_a" in prompt
        return completion(json.dumps({"verdict": ok, "explanation": "checked"}))

    server.script = [verdict]
    yield server
    server.close()


@pytest.mark.parametrize("preset", PRESETS)
def test_perfect_trace_is_optimal(preset, judge_server, tmp_path):
    task = load_preset(preset)()
    judge = OpenAIJudge(judge_server.base_url, "judge-model", api_key_env="NO_SUCH_KEY_SET")
    with Executor(task, num_slots=2, seed=0, judge=judge) as executor:
        store = RunStore(tmp_path / "magma.db")
        store.open_run("r", preset, {})
        summaries = RunLoop(task, TraceAgent(task.perfect_trace()), executor, store, "r",
                            episodes=2, seed=0).run()
    assert len(summaries) == 2
    for s in summaries:
        assert s.status == "success", store.episode_record("r", s.episode)["reason"]
        assert s.stages_passed == s.stages_total == s.optimal
    if preset == "sorting.Question":
        assert len(judge_server.requests) >= 2
