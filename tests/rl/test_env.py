"""The trainer environment on the real engine and simulator: groups, steps, rewards, store."""

from __future__ import annotations

import asyncio
import json

import pytest

from magma_core.rl import Reward, TrainingEnv
from magma_core.runs import LoopLimits
from magma_core.store import open_store
from magma_core.user_error import UserError

pytestmark = pytest.mark.sim

BAD_JSON = {"role": "assistant", "content": "",
            "tool_calls": [{"id": "x", "type": "function", "function": {"name": "pick", "arguments": "{oops"}}]}


def _trace(env, item=0):
    return env.source[item].task.perfect_trace().decisions()


def _play(group, scripts):
    """Step every rollout of ``group`` with its script (a list of messages) until done."""
    results = [[] for _ in group.rollouts]
    turn = 0
    while not group.done:
        messages = []
        for rollout, script in zip(group.rollouts, scripts, strict=True):
            if rollout.done:
                messages.append(None)
            else:
                message = script[turn] if turn < len(script) else "I am done."
                messages.append(message(rollout) if callable(message) else message)
        for i, result in enumerate(group.step(messages)):
            if result is not None:
                results[i].append(result)
        turn += 1
    return results


def test_a_group_starts_from_one_world_bit_for_bit(cube_env):
    group = cube_env.group(0, size=4)
    observations = group.reset()
    digests = [o.digest for o in observations]
    assert len(set(digests)) == 1 and len(digests[0]) == 64
    assert observations[0].messages[0]["role"] == "system"
    assert observations[0].messages[-1] == {"role": "user", "content": "Put the cube in zone A."}
    assert {t["function"]["name"] for t in observations[0].tools} >= {"pick", "place"}
    # other seeds start elsewhere; a reused slot still restores the same start
    group.close()
    other = cube_env.group(1, size=1)
    assert other.reset()[0].digest != digests[0]
    other.close()
    again = cube_env.group(0, size=2)
    assert [o.digest for o in again.reset()] == digests[:2]
    again.close()


def test_the_reference_trace_earns_the_hand_computed_reward_and_is_stored(cube_env):
    group = cube_env.group(0, size=2)
    group.reset()
    decisions = _trace(cube_env)
    results = _play(group, [[lambda r, d=d: r.message_for(d) for d in decisions]] * 2)
    for steps in results:
        assert [s.done for s in steps] == [False, False, True]
        assert [s.reward for s in steps[:-1]] == [0.0, 0.0]
        # success 1 + progress 0.5 * 2/2 + optimal 0.25 * 2/2 - 0.01 * 2 calls
        assert steps[-1].reward == pytest.approx(1.73)
        assert steps[-1].info["status"] == "success"
    store = open_store(cube_env.store.path.parent, create=False)
    record = store.episode_record("train", group[0].episode)
    assert record["rl"]["reward"] == pytest.approx(1.73)
    assert record["rl"]["start_digest"] == group[0].digest
    assert record["status"] == "success" and len(record["steps"]) == 3
    assert record["agent_memory"]["history"][0] == {"role": "user", "content": "Put the cube in zone A."}
    assert store.count("decisions", "train") >= 3
    store.close()


def test_a_wasted_call_costs_its_price_and_the_optimal_share(cube_env):
    group = cube_env.group(0, size=1)
    group.reset()
    pick, place, answer = _trace(cube_env)
    script = [lambda r: r.message_for(place), lambda r: r.message_for(pick),
              lambda r: r.message_for(place), lambda r: r.message_for(answer)]
    steps = _play(group, [script])[0]
    assert steps[0].info["calls"][0]["ok"] is False  # nothing held yet
    # success 1 + progress 0.5 * 2/2 + optimal 0.25 * 1/2 (3 calls > target 2) - 0.01 * 3
    assert steps[-1].reward == pytest.approx(1.595)
    assert steps[-1].info["reward_terms"]["optimal"] == pytest.approx(0.125)


def test_bad_actions_are_failed_decisions_and_never_end_the_rollout(cube_env, monkeypatch):
    monkeypatch.setattr(cube_env, "limits", LoopLimits(max_idle_decisions=20))
    group = cube_env.group(0, size=1)
    rollout = group[0]
    group.reset()
    bad = [BAD_JSON, {"role": "assistant", "tool_calls": [{"function": {"name": "fly", "arguments": "{}"}}]},
           {"role": "assistant", "tool_calls": "pick"}, 42, {"content": None}, "\ud800 \x00 pick(cube)",
           {"role": "assistant", "tool_calls": [{"function": {"name": "pick", "arguments": "[1]"}}]}]
    codes = [(rollout.step(m).info["decision_error"] or {}).get("code") for m in bad]
    assert codes == ["bad_arguments", "unknown_tool", "invalid_reply", "invalid_reply", None, None,
                     "bad_arguments"]
    assert not rollout.done
    steps = [rollout.step(rollout.message_for(d)) for d in _trace(cube_env)]
    assert steps[-1].done and steps[-1].info["status"] == "success"
    # the failed decisions called no tool: 2 calls, both stages optimal
    assert steps[-1].reward == pytest.approx(1.73)
    record = rollout.record
    assert len(record["steps"]) == 10
    kept = [m for m in record["agent_memory"]["history"] if m["role"] == "assistant"]
    assert len(kept) == 5  # the 4 malformed replies are not kept in the conversation
    assert "oops" not in json.dumps(kept) and "fly" not in json.dumps(kept)


def test_three_decisions_without_a_call_end_the_rollout_as_magma_run_does(cube_env):
    group = cube_env.group(0, size=1)
    group.reset()
    results = [group[0].step("Hello?") for _ in range(3)]
    assert [r.done for r in results] == [False, False, True]
    assert results[-1].info["status"] == "no_action" and results[-1].reward == pytest.approx(0.0)


def test_steps_given_together_are_one_submit_also_across_groups_and_async(cube_env, monkeypatch):
    calls = []
    submit = cube_env.executor.submit
    monkeypatch.setattr(cube_env.executor, "submit", lambda d: calls.append(sorted(d)) or submit(d))
    a, b = cube_env.group(0, size=2), cube_env.group(2, size=1)
    a.reset(), b.reset()
    pick = _trace(cube_env)[0]
    cube_env.step({r: r.message_for(pick) for r in [*a.rollouts, *b.rollouts]})
    assert len(calls) == 1 and len(calls[0]) == 3

    async def both():
        place = _trace(cube_env)[1]
        return await asyncio.gather(a.astep([r.message_for(place) for r in a.rollouts]),
                                    b[0].astep(b[0].message_for(place)))

    out_a, out_b = asyncio.run(both())
    assert len(calls) == 2 and len(calls[1]) == 3
    assert all(r.info["calls"][0]["ok"] for r in [*out_a, out_b])
    a.close(), b.close()


def test_a_user_reward_function_sees_the_record(tmp_path):
    from magma_core.rl import TaskSource

    seen = []

    def calls_and_stages(record):
        seen.append(record)
        return 10.0 * record["stages_passed"] - len(record["steps"])

    with TrainingEnv(TaskSource.target("cube.PickPlace"), slots=1, out=tmp_path,
                     reward=calls_and_stages, backend="cpu") as env:
        group = env.group(0, size=1)
        group.reset()
        pick = env.source[0].task.perfect_trace().decisions()[0]
        group[0].step(group[0].message_for(pick))
        group[0].end()
        assert group[0].reward == pytest.approx(-1.0)  # no stage passed, one step
        assert seen[0]["status"] == "truncated" and seen[0]["rl"]["group"] == 1
        with pytest.raises(UserError):
            Reward(success=float("nan"))


def test_running_out_of_slots_is_a_user_error(cube_env):
    group = cube_env.group(0, size=cube_env.num_slots + 1)
    with pytest.raises(UserError, match="slots"):
        group.reset()
    group.close()
    assert len(cube_env._free) == cube_env.num_slots


def test_stored_rollouts_export_like_any_run(cube_env, tmp_path):
    from magma_core.cli import main

    folder = cube_env.store.path.parent
    out = tmp_path / "export"
    assert main(["export", "train", "--out", str(folder), "--output", str(out)]) == 0
    files = sorted(p.name for p in out.rglob("*.jsonl"))
    assert files, list(out.rglob("*"))
    lines = [json.loads(line) for p in out.rglob("*.jsonl") for line in p.read_text().splitlines()]
    assert any(m.get("tool_calls") for row in lines for m in row["messages"])
