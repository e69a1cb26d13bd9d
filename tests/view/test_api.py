"""The viewer's JSON API over a real store, served by uvicorn on loopback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from magma_core.store import RunStore
from magma_core.store.reader import StoreReader, open_read_only
from magma_core.view.benchmarks import bench_page
from magma_core.view.catalog import list_items
from magma_core.view.generations import generation_tree

from .conftest import ViewerServer

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def api(viewer_store):
    with ViewerServer(viewer_store) as server:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            yield client


def test_items_list_every_run_with_counts_from_the_store(api, viewer_store):
    data = api.get("/api/items").json()
    assert data["kinds"][0] == {"kind": "run", "label": "Runs"}
    items = {item["id"]: item for item in data["items"]}
    assert set(items) == {"sorting", "machine", "stuck"}
    with RunStore(viewer_store / "magma.db") as store:
        for name, item in items.items():
            summaries = store.episodes(name)
            assert item["kind"] == "run" and item["href"] == f"#/runs/{name}"
            assert item["counts"]["episodes"] == len(summaries)
            assert item["counts"]["stages_passed"] == sum(s.stages_passed for s in summaries)
            assert item["state"] == "complete"
    assert items["stuck"]["counts"]["statuses"] == {"no_action": 1}
    assert items["sorting"]["subtitle"] == "sorting.SortAll" and items["sorting"]["agent"] == "trace"
    assert api.get("/api/items", params={"kind": "run"}).json()["items"]
    assert api.get("/api/items", params={"kind": "nope"}).status_code == 404


def test_run_episode_and_world_routes(api, viewer_store):
    run = api.get("/api/runs/sorting").json()
    assert [e["episode"] for e in run["episodes"]] == [0, 1]
    episode = api.get("/api/runs/sorting/episodes/0").json()
    with RunStore(viewer_store / "magma.db") as store:
        assert episode["record"] == store.episode_record("sorting", 0)
        assert api.get("/api/runs/sorting/episodes/0/world").json() == store.episode_world("sorting", 0)
    assert episode["summary"]["decisions"] == len(episode["record"]["steps"])
    for missing in ("/api/runs/nope", "/api/runs/sorting/episodes/9",
                    "/api/runs/sorting/episodes/9/world"):
        response = api.get(missing)
        assert response.status_code == 404 and response.json()["detail"]


def test_only_loopback_host_names_are_answered(api):
    assert api.get("/api/items", headers={"Host": "localhost:1234"}).status_code == 200
    assert api.get("/api/items", headers={"Host": "rebound.example.com"}).status_code == 400


def test_the_front_end_is_served(api):
    index = api.get("/")
    assert index.status_code == 200 and '<script type="module" src="/static/app.js">' in index.text
    for name in ("app.js", "episode.js", "replay.js", "dom.js", "style.css", "bench.js", "charts.js",
                 "generation.js", "turns.js"):
        assert api.get(f"/static/{name}").status_code == 200


def test_reader_never_creates_or_changes_a_store(tmp_path: Path):
    reader = StoreReader(tmp_path)
    assert reader.runs() == [] and reader.stamp() == "empty" and reader.episode("x", 0) is None
    assert bench_page(reader, "x") is None and generation_tree(reader, "x") is None
    assert list_items(reader)["items"] == []
    assert not (tmp_path / "magma.db").exists()
    RunStore(tmp_path / "magma.db").close()
    with pytest.raises(sqlite3.DatabaseError, match="cannot be written"):
        with open_read_only(RunStore, reader.path) as store:
            store.open_run("x", "cube.PickPlace", {})


def test_stamp_changes_when_an_episode_is_written(live_store):
    reader = StoreReader(live_store)
    before = reader.stamp()
    _add_run(live_store, "added-for-stamp")
    assert reader.stamp() != before
    assert any(r["name"] == "added-for-stamp" for r in reader.runs())


def _add_run(folder: Path, name: str) -> None:
    """Store one finished episode of run ``name``, copied from the ``machine`` run."""
    copy_episode(folder, "machine", 0, name, 0, world=True)


def copy_episode(folder: Path, source: str, episode: int, name: str, index: int, *,
                 world: bool) -> None:
    """Store ``source``'s episode as episode ``index`` of run ``name`` (created if need be),
    with or without its world states."""
    from dataclasses import replace

    from magma_core.store import EpisodeRows

    with RunStore(folder / "magma.db") as store:
        record = store.episode_record(source, episode)
        summary = replace(store.episodes(source)[episode], episode=index)
        rows = EpisodeRows(world=store.episode_world(source, episode) if world else None)
        if store.get_run(name) is None:
            store.open_run(name, "cube.Machine", {"agent": "trace", "episodes": 1})
        store.save_episode(name, summary, record, rows)


def test_magma_view_serves_on_loopback(viewer_store):
    """The real command: one line with the URL, then the API answers on 127.0.0.1."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "magma_core.cli", "view", "--out", str(viewer_store), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("MAGMA viewer on http://127.0.0.1:"), line
        url = line.split()[3]
        assert f"store: {viewer_store / 'magma.db'}" in line
        items = httpx.get(f"{url}/api/items", timeout=10).json()["items"]
        assert {i["id"] for i in items} >= {"sorting", "machine", "stuck"}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_reads_while_a_run_holds_a_write_transaction(live_store):
    """WAL: the viewer reads the last committed state while a writer is mid-transaction."""
    reader = StoreReader(live_store)
    before = {r["name"] for r in reader.runs()}
    writer = sqlite3.connect(live_store / "magma.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO runs(name, preset, config, created_at, updated_at) VALUES (?,?,?,?,?)",
            ("uncommitted", "cube.PickPlace", "{}", 0.0, 0.0),
        )
        assert {r["name"] for r in reader.runs()} == before  # not blocked, not seen
        assert reader.episode("sorting", 0) is not None
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_run_state_running_then_incomplete(tmp_path, monkeypatch):
    import time

    from magma_core.store import reader as reader_module

    with RunStore(tmp_path / "magma.db") as store:
        store.open_run("half", "cube.PickPlace", {"agent": "trace", "episodes": 3})
    reader = StoreReader(tmp_path)
    (run,) = reader.runs()
    assert (run["state"], run["planned"], run["stored"]) == ("running", 3, 0)
    later = time.time() + 3600
    monkeypatch.setattr(reader_module.time, "time", lambda: later)
    assert reader.runs()[0]["state"] == "incomplete"
