"""Gen's front door: ``magma gen``, a Python caller of ``generate(GenSpec)`` and a Ray actor's
tree reach the generator through the same function, and grow the same trees."""

from __future__ import annotations

import dataclasses

import pytest

from magma_core.cli import main
from magma_core.gen import GenSpec, UserError, generate, ray_trees
from magma_core.gen import entry as front_door
from magma_core.gen.ray_trees import TreeJob
from magma_core.runs.ray_actors import UnitActor
from magma_core.store import open_generation_store

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


def _tree(folder, name="g") -> list[tuple]:
    """The stored candidates of tree 0, without ids: (situation depth, index, status, decision)."""
    with open_generation_store(folder) as store:
        depth = {s.id: s.depth for s in store.situations(name)}
        return sorted((depth[c.situation], c.candidate_index, c.status, str(c.output.get("tool_calls")))
                      for c in store.candidates(name))


def test_cli_python_and_a_ray_actor_reach_the_generator_through_one_function(tmp_path, monkeypatch):
    calls: list[str] = []
    original = front_door.grow_here

    def spy(parts, executor, store, name, settings, pacing, listener=None):
        calls.append(name)
        return original(parts, executor, store, name, settings, pacing, listener)

    monkeypatch.setattr(front_door, "grow_here", spy)
    monkeypatch.setattr(ray_trees, "grow_here", spy)

    events: list[str] = []
    spec = GenSpec(PRESET, agent="trace", max_nodes=12, slots=2, out=tmp_path / "py", name="g")
    result = generate(spec, lambda event, subject, payload: events.append(event))
    assert result.ok and result.counts["candidates"] == 12 and result.executed == 12
    assert events[0] == "begin" and events.count("candidate") == 12
    assert [t.candidates for t in result.trees] == [12]

    assert main(["gen", PRESET, "--agent", "trace", "--max-nodes", "12", "--slots", "2",
                 "--out", str(tmp_path / "cli"), "--name", "g"]) == 0

    # What a Ray actor runs for one tree (the actor's body, in this process, without Ray).
    job = TreeJob(dataclasses.replace(spec, out=tmp_path / "unused"))
    actor = UnitActor(job, 0)
    actor.start()
    messages: list[tuple] = []
    while not messages or messages[-1][0] not in ("done", "error"):
        for message in actor.take(1.0):
            messages.append(message)
            if message[0] == "next":
                actor.give(0 if not any(m[0] == "result" for m in messages) else None)
    assert messages[-1] == ("done",)
    grown = next(m[2] for m in messages if m[0] == "result")
    assert len(grown.candidates) == 12

    assert calls == ["g", "g", ray_trees.PRIVATE]
    assert _tree(tmp_path / "py") == _tree(tmp_path / "cli")


def test_a_python_caller_gets_user_errors_before_any_tree(tmp_path):
    with pytest.raises(UserError, match="branches"):
        GenSpec(PRESET, branches=0)
    with pytest.raises(UserError, match="slots"):
        GenSpec(PRESET, slots=0)
    generate(GenSpec(PRESET, agent="trace", max_nodes=4, slots=1, out=tmp_path, name="g"))
    with pytest.raises(UserError, match="other settings"):
        generate(GenSpec(PRESET, agent="trace", branches=3, max_nodes=4, out=tmp_path, name="g"))
    with pytest.raises(UserError, match="grown without --ray"):
        from magma_core.runs.ray_cluster import RayCluster

        generate(GenSpec(PRESET, agent="trace", max_nodes=4, out=tmp_path, name="g",
                         ray=RayCluster(actors=1)))
    with open_generation_store(tmp_path) as store:
        assert store.counts("g")["candidates"] == 4
