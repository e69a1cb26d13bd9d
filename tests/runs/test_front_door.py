"""The front door: ``magma run``, ``magma run --workers 2`` and a Python caller of
``run(RunSpec)`` reach the engine through the same function and see the same events."""

from __future__ import annotations

import json

import pytest

import magma_core.runs
from magma_core.cli import main
from magma_core.runs import RunResult, RunSpec, UserError, run
from magma_core.runs import entry as front_door

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


class Events:
    """A listener keeping, per episode, the events it saw (in order)."""

    def __init__(self) -> None:
        self.by_episode: dict[int, list[str]] = {}
        self.plans: list = []

    def __call__(self, event: str, episode, payload) -> None:
        if event == "begin":
            self.plans.append(payload)
        elif event in ("start", "step", "end"):
            self.by_episode.setdefault(episode.episode, []).append(event)
            if event == "end":
                assert payload.status == "success"


def _records(result: RunResult) -> list[dict]:
    from magma_core.store import open_store

    with open_store(result.store_path.parent, create=False) as store:
        records = [store.episode_record(result.name, s.episode) for s in result.summaries]
    for record in records:
        record.pop("timings", None)
        record.pop("slot")  # which slot ran it differs between the layouts
        record["agent"].pop("latency_s", None)
        record["agent"].pop("per_decision", None)
        for step in record["steps"]:
            step.pop("timings", None)
    return records


def test_cli_workers_and_python_reach_the_engine_through_the_same_function(tmp_path, monkeypatch):
    # Every path ends in assembly.run_episodes: count the calls made in this process.
    calls: list[int] = []
    original = front_door.run_episodes

    def spy(spec, parts, store, **kwargs):
        calls.append(spec.workers)
        return original(spec, parts, store, **kwargs)

    monkeypatch.setattr(front_door, "run_episodes", spy)

    python = Events()
    result = run(RunSpec(PRESET, episodes=3, slots=2, out=tmp_path / "py", name="r"), python)
    assert result.ok and [s.episode for s in result.summaries] == [0, 1, 2]
    assert python.plans[0].todo == [0, 1, 2] and python.plans[0].stored == 0

    cli = Events()
    real_run = magma_core.runs.run
    monkeypatch.setattr(magma_core.runs, "run", lambda spec, listener: real_run(
        spec, lambda *event: (cli(*event), listener(*event))))
    code = main(["run", PRESET, "--episodes", "3", "--slots", "2", "--out",
                 str(tmp_path / "cli"), "--name", "r"])
    assert code == 0

    workers = Events()
    in_workers = run(RunSpec(PRESET, episodes=3, slots=2, workers=2, out=tmp_path / "w",
                             name="r"), workers)
    assert in_workers.ok and in_workers.failures == []

    # In this process the engine was reached twice through run_episodes; the workers reached
    # it through the same function in their own processes (their events say so, below).
    assert calls == [1, 1]
    expected = python.by_episode
    assert set(expected) == {0, 1, 2}
    assert cli.by_episode == expected
    assert workers.by_episode == expected
    # ... and stored the same episodes.
    cli_result = json.loads((tmp_path / "cli" / "r.summary.json").read_text())
    assert [e["status"] for e in cli_result["episodes"]] == ["success"] * 3
    assert _records(result) == _records(in_workers)


def test_a_python_caller_gets_user_errors_before_any_episode(tmp_path):
    with pytest.raises(UserError, match="unknown scenario 'nope'"):
        run(RunSpec("nope.Preset", out=tmp_path))
    with pytest.raises(UserError, match="pass --judge"):
        run(RunSpec("sorting.Question", out=tmp_path))
    with pytest.raises(UserError, match="unknown agent spec"):
        run(RunSpec(PRESET, agent="ftp://x", out=tmp_path))
    with pytest.raises(UserError, match="positive integer"):
        RunSpec(PRESET, episodes=0)
    assert not (tmp_path / "magma.db").exists()


def test_a_resumed_run_keeps_its_seed_and_runs_only_what_is_missing(tmp_path):
    first = run(RunSpec(PRESET, episodes=1, out=tmp_path, name="r"))
    assert first.resumed == 0
    events = Events()
    second = run(RunSpec(PRESET, episodes=2, out=tmp_path, name="r"), events)
    assert second.resumed == 1 and events.plans[0].todo == [1]
    assert [s.episode for s in second.summaries] == [0, 1]
    with pytest.raises(UserError, match="--seed"):
        run(RunSpec(PRESET, episodes=2, seed=5, out=tmp_path, name="r"))


def test_runs_in_one_process_freeze_the_collector_once(tmp_path):
    """The first engine freezes what the imports left (ManiSkill's ``gc.collect`` then skips
    it); later runs freeze nothing more, so what they leave stays collectable."""
    import gc

    run(RunSpec(PRESET, episodes=1, out=tmp_path, name="first"))
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # torch, ManiSkill and the rest of the imports
    for name in ("second", "third"):
        run(RunSpec(PRESET, episodes=1, out=tmp_path, name=name))
        assert gc.get_freeze_count() == frozen
