"""Camera images in the run store (``store.images``): saved with their episode in one
transaction, read back byte for byte, and a version-3 store (before the table) is read as it
is and migrated to version 4 when opened for writing. Real SQLite files."""

from __future__ import annotations

import hashlib
import sqlite3

from magma_core.store import (
    STORE_VERSION,
    EpisodeRows,
    EpisodeSummary,
    RunStore,
    StoreReader,
    open_store,
)


def _summary(episode: int) -> EpisodeSummary:
    return EpisodeSummary(episode=episode, seed=episode, status="success", stages_total=1,
                          stages_passed=1, optimal=1, acceptable=0, exceeded=0, tool_calls=1,
                          decisions=2, wall_s=0.1)


PNG = b"\x89PNG\r\n\x1a\nfake-bytes"


def test_images_round_trip_with_their_episode(tmp_path):
    rows = EpisodeRows(images=((1, "overview", "image/png", 4, 3, PNG),
                               (1, "wrist", "image/png", 2, 2, PNG + b"w"),
                               (2, "overview", "image/png", 4, 3, PNG + b"2")))
    with RunStore(tmp_path / "magma.db") as store:
        store.open_run("r", "p.X", {})
        store.save_episode("r", _summary(0), {}, rows)
        store.save_episode("r", _summary(1), {})
    reader = StoreReader(tmp_path)
    got = reader.images("r", 0)
    assert [(i["decision"], i["camera"]) for i in got] == [(1, "overview"), (1, "wrist"), (2, "overview")]
    assert got[2]["data"] == PNG + b"2" and (got[0]["width"], got[0]["height"]) == (4, 3)
    assert [i["camera"] for i in reader.images("r", 0, decision=1)] == ["overview", "wrist"]
    assert reader.images("r", 1) == []


def test_a_version_3_store_is_read_as_is_and_migrated_for_writing(tmp_path):
    path = tmp_path / "magma.db"
    with RunStore(path) as store:
        store.open_run("r", "p.X", {})
        store.save_episode("r", _summary(0), {})
    with sqlite3.connect(path) as conn:  # what MAGMA wrote before the images came
        conn.execute("DROP TABLE decision_images")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert StoreReader(tmp_path).images("r", 0) == []  # read-only: nothing written
    with open_store(tmp_path, create=False) as store:
        assert store.episode_images("r", 0) == [] and len(store.episodes("r")) == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    with open_store(tmp_path) as store:
        store.save_episode("r", _summary(1), {}, EpisodeRows(images=((1, "overview", "image/png", 1, 1, PNG),)))
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert version == str(STORE_VERSION) and "decision_images" in tables
    assert StoreReader(tmp_path).images("r", 1)[0]["data"] == PNG
