"""``magma gen --ray``: one tree per unit of work on a local Ray cluster (2 CPUs, one per
module), the driver alone writing the store. The real command on the real simulator; without
Ray these skip.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'magma[ray]')")

from magma_core.cli import main  # noqa: E402
from magma_core.gen import GenSpec, generate  # noqa: E402
from magma_core.gen.ray_trees import tree_budget  # noqa: E402
from magma_core.runs.ray_cluster import RayCluster, connect, disconnect  # noqa: E402
from magma_core.store import open_generation_store  # noqa: E402

PRESET = "cube.PickPlace"
# M does not bind (the trees end by their loop limits): each tree grows as it would alone.
SHAPE = ["--branches", "2", "--max-nodes", "400", "--slots", "2", "--name", "g"]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster of 2 CPUs for the module; the commands join it."""
    connected = connect(RayCluster(num_cpus=2))
    yield
    if connected:
        disconnect()


def _gen(out: Path, *extra: str) -> int:
    return main(["gen", PRESET, *SHAPE, "--out", str(out), *extra])


def _records(folder: Path) -> dict[tuple, Any]:
    """Every situation and candidate keyed by its path from its tree's root (tree, candidate
    index, ...), without ids and timings."""
    with open_generation_store(folder) as store:
        situations = {s.id: s for s in store.situations("g")}
        candidates = {c.id: c for c in store.candidates("g")}
        trees = [(t["tree"], t["seed"], t["tools"]) for t in store.trees("g")]

    def path(sid: int) -> tuple:
        s = situations[sid]
        if s.parent is None:
            return (s.tree,)
        c = candidates[s.parent]
        return (*path(c.situation), c.candidate_index)

    records: dict[tuple, Any] = {("trees",): trees}
    for s in situations.values():
        assert s.agent_input["id"] == s.id  # the input as sent names its situation
        agent_input = {k: v for k, v in s.agent_input.items() if k != "id"}
        records[("s", *path(s.id))] = (s.stage, s.depth, s.idle, s.status, s.end_status, agent_input)
    for c in candidates.values():
        assert c.tree == situations[c.situation].tree
        records[("c", *path(c.situation), c.candidate_index)] = (
            c.stage, c.response_status, c.status, c.end_status, c.episode_status, c.score, c.memory,
            c.output.get("output"), None if c.next_situation is None else path(c.next_situation))
    return records


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> dict[str, Path]:
    """The trace agent's 2 trees grown without Ray and with ``--ray``."""
    plain, on_ray = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("ray")
    assert _gen(plain, "--agent", "trace", "--trees", "2") == 0
    assert _gen(on_ray, "--agent", "trace", "--trees", "2", "--ray") == 0
    return {"plain": plain, "ray": on_ray}


@pytest.mark.sim
def test_gen_on_ray_stores_the_same_trees_as_without_ray(grown):
    on_ray = _records(grown["ray"])
    assert len(on_ray) > 20 and any(key[:2] == ("s", 1) for key in on_ray)  # both trees grew
    assert on_ray == _records(grown["plain"])
    with open_generation_store(grown["ray"]) as store:
        assert store.get_generation("g")["finished"]
        assert all(store.snapshot_blob("g", s.id) for s in store.situations("g"))


@pytest.mark.sim
def test_a_noisy_tree_on_ray_is_the_tree_grown_without_ray(tmp_path):
    """With noisy-trace the candidates depend on the situation ids the agent sees; one tree
    gets the same ids both ways, so its mistakes, statuses and scores are the same."""
    assert _gen(tmp_path / "plain", "--trees", "1", "--max-per-stage", "1") == 0
    assert _gen(tmp_path / "ray", "--trees", "1", "--max-per-stage", "1", "--ray") == 0
    on_ray = _records(tmp_path / "ray")
    mistakes = [kind for key, c in on_ray.items() if key[0] == "c" for kind, _ in c[6]["noise"]]
    assert set(mistakes) - {"reference"}  # noisy indeed
    assert on_ray == _records(tmp_path / "plain")


@pytest.mark.sim
def test_resume_grows_only_the_trees_not_stored(tmp_path, grown, capsys):
    folder = tmp_path / "resumed"
    assert _gen(folder, "--agent", "trace", "--trees", "1", "--ray") == 0
    with open_generation_store(folder) as store:
        before = (store.situations("g"), store.candidates("g"))
    capsys.readouterr()
    assert _gen(folder, "--agent", "trace", "--trees", "2", "--ray") == 0
    stdout = capsys.readouterr().out
    assert "tree 1:" in stdout and "tree 0:" not in stdout  # tree 0 was stored: skipped
    with open_generation_store(folder) as store:
        situations, candidates = store.situations("g"), store.candidates("g")
    assert situations[:len(before[0])] == before[0] and candidates[:len(before[1])] == before[1]
    assert _records(folder) == _records(grown["plain"])
    assert _gen(folder, "--agent", "trace", "--trees", "2", "--ray") == 0  # nothing left to grow
    stdout = capsys.readouterr().out
    assert "tree 0:" not in stdout and "tree 1:" not in stdout


@pytest.mark.sim
def test_an_actor_killed_with_its_tree_is_survived(tmp_path, grown):
    killed: list[int] = []
    warnings: list[str] = []

    def listener(event: str, note: Any, payload: Any) -> None:
        if event == "actor" and payload.seat == 0 and not killed:
            os.kill(payload.pid, signal.SIGKILL)  # before or while it grows its first tree
            killed.append(payload.pid)
        elif event == "warning":
            warnings.append(payload)

    spec = GenSpec(PRESET, agent="trace", branches=2, max_nodes=400, trees=2, slots=2,
                   out=tmp_path, name="g", ray=RayCluster(actors=2))
    result = generate(spec, listener)
    assert killed and result.failures == []
    assert _records(tmp_path) == _records(grown["plain"])  # every tree stored once


@pytest.mark.sim
def test_a_generation_grown_on_ray_exports_as_without_ray(grown, tmp_path, capsys):
    rows = {}
    for kind, folder in grown.items():
        assert main(["export", "g", "--out", str(folder), "--output", str(tmp_path / kind)]) == 0
        lines = [json.loads(line) for f in sorted((tmp_path / kind).glob("*.jsonl"))
                 for line in f.read_text().splitlines()]
        for row in lines:  # the system prompt's attributes and the tools come in the order of
            del row["id"]  # the process that built the view (an actor's, here): set aside
            assert row["messages"][0]["role"] == "system"
            row["messages"] = row["messages"][1:]
            row["tools"] = sorted(row["tools"], key=lambda tool: tool["function"]["name"])
        rows[kind] = sorted(json.dumps(row, sort_keys=True) for row in lines)
    assert rows["ray"] and rows["ray"] == rows["plain"]


def test_each_tree_gets_its_share_of_the_budget():
    assert [tree_budget(200, t) for t in (1, 2, 3, 200, 400)] == [200, 100, 67, 1, 1]


@pytest.mark.sim
def test_a_generation_grown_without_ray_is_not_resumed_with_ray(grown, capsys):
    """Its stored trees may be unfinished, and --ray would count them as done."""
    with open_generation_store(grown["plain"]) as store:
        before = store.counts("g")
    assert _gen(grown["plain"], "--agent", "trace", "--trees", "3", "--ray") != 0
    err = capsys.readouterr().err.strip()
    assert "grown without --ray" in err and len(err.splitlines()) == 1
    with open_generation_store(grown["plain"]) as store:
        assert store.counts("g") == before
