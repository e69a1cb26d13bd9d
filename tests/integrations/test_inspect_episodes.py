"""The MAGMA side of the Inspect bridge on the real simulator, without Inspect: a suite's
trials played through :class:`SuiteEpisodes` with the served trace as the model give the same
verdict, stage by stage, as ``magma bench run --agent openai:trace@URL`` at the same server."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from magma_core.bench.suite import load_suite
from magma_core.integrations.inspect.episodes import SuiteEpisodes
from magma_core.user_error import UserError

from .equality import bench_summaries, comparable, compile_tiny, requests_seen
from .trace_model import MODEL, TraceModelServer, TraceReplies

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return compile_tiny(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def served(suite):
    items = load_suite(suite).items
    # the paraphrased item's model skips its first decision: that item fails, alike everywhere
    with TraceModelServer(TraceReplies(items, skip={items[1]["item_id"]: 1})) as server:
        yield server


async def _play(episodes: SuiteEpisodes, url: str, epochs: int):
    async with httpx.AsyncClient(timeout=30) as client:
        async def generate(messages, tools, tool_choice):
            body = {"model": MODEL, "messages": messages,
                    **({"tools": tools, "tool_choice": tool_choice} if tools else {})}
            reply = await client.post(f"{url}/chat/completions", json=body)
            reply.raise_for_status()
            return reply.json()["choices"][0]["message"]

        steps = []
        keys = [(s["id"], epoch) for s in episodes.samples() for epoch in range(1, epochs + 1)]
        results = await asyncio.gather(*(episodes.run(item, epoch, generate, on_step=steps.append)
                                         for item, epoch in keys))
        return dict(zip(keys, results, strict=True)), steps


def test_same_verdicts_as_bench_run_through_the_same_model(suite, served, tmp_path):
    first = len(served.requests)
    with SuiteEpisodes(suite, slots=2, out=tmp_path / "inspect-runs", backend="cpu") as episodes:
        played, steps = asyncio.run(_play(episodes, served.base_url, epochs=2))
    middle = len(served.requests)
    benched = bench_summaries(suite, f"openai:{MODEL}@{served.base_url}", tmp_path / "runs", trials=2)
    # the model was asked the same things: messages, the stage's tools and tool_choice
    assert requests_seen(served.requests[first:middle]) == requests_seen(served.requests[middle:])
    assert set(played) == set(benched)
    for key, (summary, _) in played.items():
        assert comparable(summary) == comparable(benched[key]), key
    verdicts = {key: s["verdict"] for key, (s, _) in played.items()}
    assert sorted(set(verdicts.values())) == ["success", "textual_hallucination"]
    assert {s["seed"] for s, _ in played.values()} == {0, 1}  # epoch e is trial e - 1
    assert all(step["calls"] or step["status"] for step in steps)


@pytest.mark.parametrize("slots", [1, 2])
def test_trials_beyond_the_slots_wait_for_one(suite, served, slots):
    """Four trials started at once (as Inspect starts up to max_samples samples): at most
    ``slots`` play at a time, each in a slot of its own, and all four finish."""
    replies = TraceReplies(load_suite(suite).items)
    playing: set = set()
    most = 0

    async def play_all(episodes):
        def generate_for(key):
            async def generate(messages, tools, tool_choice):
                nonlocal most
                playing.add(key)
                most = max(most, len(playing))
                await asyncio.sleep(0.01)  # let the other trials run meanwhile
                return replies.reply(messages)
            return generate

        keys = [(s["id"], epoch) for s in episodes.samples() for epoch in (1, 2)]
        return await asyncio.gather(*(episodes.run(item, epoch, generate_for((item, epoch)),
                                                   on_end=lambda *_, k=(item, epoch): playing.discard(k))
                                      for item, epoch in keys))

    with SuiteEpisodes(suite, slots=slots, backend="cpu") as episodes:
        results = asyncio.run(play_all(episodes))
    assert [s["verdict"] for s, _ in results] == ["success"] * 4
    assert most == slots


def test_a_cancelled_trial_is_stored_truncated_and_frees_its_slot(suite, tmp_path):
    """A sample cancelled while its model generates (Inspect's time limit, a cancel): the
    episode is ended as ``truncated`` and the one slot serves the next trial."""
    replies = TraceReplies(load_suite(suite).items)
    ended = []

    async def scenario(episodes):
        asked = asyncio.Event()

        async def hang(messages, tools, tool_choice):
            asked.set()
            await asyncio.sleep(60)

        async def trace(messages, tools, tool_choice):
            return replies.reply(messages)

        item = episodes.samples()[0]["id"]
        stuck = asyncio.create_task(episodes.run(item, 1, hang, on_end=lambda s, m: ended.append(s)))
        await asyncio.wait_for(asked.wait(), 60)
        stuck.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stuck
        return await episodes.run(item, 2, trace)

    with SuiteEpisodes(suite, slots=1, backend="cpu", out=tmp_path / "runs") as episodes:
        summary, _ = asyncio.run(scenario(episodes))
    assert [(s["verdict"], s["decisions"]) for s in ended] == [("truncated", 0)]
    assert summary["verdict"] == "success" and summary["seed"] == 1


def test_a_trial_of_an_unknown_item_or_epoch_is_refused(suite):
    episodes = SuiteEpisodes(suite, slots=1, backend="cpu")
    try:
        async def generate(messages, tools, tool_choice):
            raise AssertionError("never asked")

        with pytest.raises(UserError, match="has no item"):
            asyncio.run(episodes.run("nope", 1, generate))
        with pytest.raises(ValueError, match="epoch"):
            asyncio.run(episodes.run(episodes.samples()[0]["id"], 0, generate))
    finally:
        episodes.close()
