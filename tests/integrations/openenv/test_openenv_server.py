"""The MAGMA environment through OpenEnv's own client (``EnvClient`` over the WebSocket),
served by OpenEnv's server over the real engine and simulator: groups that share one start,
concurrent sessions, step rewards and credit, group advantages, the run store, bad input."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from magma_core.integrations.openenv.client import MagmaEnvClient, items
from magma_core.integrations.openenv.models import MagmaAction
from magma_core.store import open_store

from .conftest import SLOTS, trace_actions

pytestmark = [pytest.mark.bridges, pytest.mark.sim]

BAD_CALL = {"id": "x", "type": "function", "function": {"name": "pick", "arguments": "{oops"}}


async def _play(client: MagmaEnvClient, actions: list[dict]) -> list:
    results = []
    for fields in actions:
        results.append(await client.step(MagmaAction(**fields)))
        if results[-1].done:
            break
    return results


def test_a_group_shares_one_start_and_concurrent_sessions_earn_the_engines_reward(served):
    base_url, server, out = served
    actions = trace_actions(server.env)

    async def main():
        clients = [MagmaEnvClient(base_url=base_url, message_timeout_s=300) for _ in range(3)]
        for c in clients:
            await c.connect()
        try:
            openings = await asyncio.gather(clients[0].reset(item="cube.PickPlace@0", group="g"),
                                            clients[1].reset(item="cube.PickPlace@0", group="g"),
                                            clients[2].reset(seed=1))
            runs = await asyncio.gather(_play(clients[0], actions), _play(clients[1], actions))
            states = [await c.state() for c in clients[:2]]
            return openings, runs, states
        finally:
            for c in clients:
                await c.close()

    openings, runs, states = asyncio.run(main())
    first = openings[0].observation
    assert first.messages[0]["role"] == "system"
    assert first.messages[-1] == {"role": "user", "content": "Put the cube in zone A."}
    assert {t["function"]["name"] for t in first.tools} >= {"pick", "place"}
    assert len(first.digest) == 64 and openings[1].observation.digest == first.digest
    assert openings[2].observation.digest != first.digest  # seed 1 starts elsewhere
    assert [o.metadata["member"] for o in openings[:2]] == [0, 1]
    for steps, state in zip(runs, states, strict=True):
        assert [s.done for s in steps] == [False, False, True]
        assert [s.reward for s in steps] == [0.0, 0.0, pytest.approx(1.73)]  # terminal rewards
        # credit (two stages: place, then the answer): pick -0.01 (a call); place -0.01 + the
        # first stage passed and optimal, 0.5/2 + 0.25/2; the answer: the rest, success 1 + 0.375
        credits = [s.observation.credit for s in steps]
        assert credits == pytest.approx([-0.01, 0.365, 1.375])
        assert sum(credits) + state.start_credit == pytest.approx(1.73)
        assert state.credits == pytest.approx(credits) and state.done and state.status == "success"
        assert state.group_rewards == pytest.approx([1.73, 1.73])
        assert state.group_advantages == [0.0, 0.0]
        assert steps[-1].observation.status == "success" and steps[-1].observation.calls == []
    assert states[0].group_number == states[1].group_number and states[0].group == "g"
    with open_store(out, create=False) as store:
        for state in states:
            record = store.episode_record("openenv", state.episode)
            assert record["rl"]["reward"] == pytest.approx(1.73)
            assert record["rl"]["start_digest"] == first.digest
            assert record["rl"]["group"] == states[0].group_number


def test_advantages_tell_a_better_member_from_a_worse_one(served):
    base_url, server, _ = served
    actions = trace_actions(server.env)
    with MagmaEnvClient(base_url=base_url, message_timeout_s=300).sync() as good, \
            MagmaEnvClient(base_url=base_url, message_timeout_s=300).sync() as idle:
        good.reset(item=0, group="mixed")
        idle.reset(item=0, group="mixed")
        for fields in actions:
            result = good.step(MagmaAction(**fields))
        assert result.done and result.reward == pytest.approx(1.73)
        assert "group_advantages" not in (result.metadata or {})  # the other member still runs
        bad = idle.step(MagmaAction(tool_calls=[BAD_CALL]))  # malformed: a recorded failed decision
        assert not bad.done and bad.observation.decision_error is not None
        assert "oops" in bad.observation.decision_error["message"]
        ended = idle.step(MagmaAction(end=True))
        assert ended.done and ended.observation.status == "truncated"
        assert ended.reward == pytest.approx(0.0)
        assert ended.metadata["group_advantages"] == pytest.approx([1.0, -1.0])
        assert idle.state().group_advantages == pytest.approx([1.0, -1.0])
        with pytest.raises(RuntimeError, match="the rollout is over"):
            idle.step(MagmaAction(content="more"))
        # a reset starts the session's next rollout: the group "mixed" is used up, so a new one
        again = idle.reset(item=0, group="mixed")
        assert again.metadata["member"] == 0 and idle.state().group_number != good.state().group_number


def test_bad_resets_are_one_line_errors_and_sessions_are_capped_at_the_slots(served):
    base_url, _, _ = served
    with MagmaEnvClient(base_url=base_url).sync() as client:
        with pytest.raises(RuntimeError, match="has no item 'nope'"):
            client.reset(item="nope")
        with pytest.raises(RuntimeError, match="no item of this source starts from seed 7"):
            client.reset(seed=7)
        with pytest.raises(RuntimeError, match="does not take colour"):
            client.reset(colour="red")
        with pytest.raises(RuntimeError, match="reset this session first"):
            client.step(MagmaAction(content="hello"))
        opened = client.reset(item=1)
        assert not opened.done and opened.observation.status == "running"
        client.step(MagmaAction(content="Let me look first."))
        client.reset(item=1)  # a reset ends the running rollout: stored as truncated
        ended_episode = client.state().episode
        assert ended_episode is None  # the new rollout runs

    async def crowd():
        clients = [MagmaEnvClient(base_url=base_url) for _ in range(SLOTS + 1)]
        errors = []
        for c in clients:
            try:
                await c.connect()
                await c.reset(item=1, group="crowd", group_size=SLOTS + 1)
            except Exception as exc:  # noqa: BLE001 - the one refused
                errors.append(str(exc))
        for c in clients:
            await c.close()
        return errors

    errors = asyncio.run(crowd())
    assert len(errors) == 1 and "CAPACITY_REACHED" in errors[0]
    with open_store(served[2], create=False) as store:
        reasons = [store.episode_record("openenv", e)["reason"] for e in store.finished_episodes("openenv")]
    assert "the session was reset" in reasons and "the OpenEnv session closed" in reasons


def test_the_command_line_says_bad_input_in_one_line(capsys):
    from magma_core.integrations.openenv.__main__ import main

    assert main(["serve", "nope.Nope"]) == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err
    assert main(["serve", "cube.PickPlace", "--seeds", "0,x"]) == 2
    assert "--seeds takes comma-separated integers" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["serve", "cube.PickPlace", "--host", "0.0.0.0"])  # loopback only


def test_the_items_route_and_openenv_schema(served):
    base_url, server, _ = served
    listed = items(base_url)
    assert [i["id"] for i in listed] == ["cube.PickPlace@0", "cube.PickPlace@1"]
    assert listed[0]["messages"][-1]["content"] == "Put the cube in zone A."
    schema = httpx.get(f"{base_url}/schema", timeout=30).json()
    assert {"content", "tool_calls", "end"} <= set(schema["action"]["properties"])
    assert {"credit", "digest", "messages"} <= set(schema["observation"]["properties"])
    assert "group_advantages" in schema["state"]["properties"]
    assert httpx.get(f"{base_url}/health", timeout=30).json()["status"] == "healthy"
