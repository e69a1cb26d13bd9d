"""The SQLite run store: atomic episodes, resume bookkeeping, WAL, refusal of mismatches."""

import json
import sqlite3

import pytest

from magma_core.runs.store import EpisodeRows, EpisodeSummary, RunStore


def _summary(episode: int, status: str = "success") -> EpisodeSummary:
    return EpisodeSummary(
        episode=episode, seed=100 + episode, status=status, stages_total=2, stages_passed=2,
        optimal=2, acceptable=0, exceeded=0, tool_calls=3, decisions=4, wall_s=0.5,
    )


def test_episode_round_trip_and_rows(tmp_path):
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r1", "cube.PickPlace", {"episodes": 2})
    rows = EpisodeRows(
        decisions=[(0, 0, "Pick the cube", "", "ongoing")],
        tool_calls=[(0, 0, "panda", "pick", json.dumps({"object": "cube"}), 1, "ok", "none")],
        stage_outcomes=[(0, "FINISH", "OPTIMAL", 2, 0)],
    )
    store.save_episode("r1", _summary(0), {"events": [1, 2]}, rows)
    assert store.finished_episodes("r1") == {0}
    assert store.episodes("r1") == [_summary(0)]
    assert store.episode_record("r1", 0) == {"events": [1, 2]}
    assert store.count("tool_calls", "r1") == 1
    assert store.count("stage_outcomes", "r1") == 1
    [run] = store.list_runs()
    assert run["name"] == "r1" and run["episodes"] == 1 and run["successes"] == 1
    mode = store._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_failed_episode_write_leaves_nothing(tmp_path):
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r1", "p.X", {})
    bad_rows = EpisodeRows(tool_calls=[(0, 0, "r", "t", "{}", 1, "", "none"), (0, 0, "r", "t", "{}", 1, "", "none")])
    with pytest.raises(sqlite3.IntegrityError):
        store.save_episode("r1", _summary(0), {}, bad_rows)  # duplicate call key mid-transaction
    assert store.finished_episodes("r1") == set()
    assert store.count("tool_calls", "r1") == 0


def test_resume_reopens_and_refuses_other_preset(tmp_path):
    path = tmp_path / "magma.db"
    with RunStore(path) as store:
        store.open_run("r1", "p.X", {"seed": 3})
        store.save_episode("r1", _summary(1), {})
    with RunStore(path) as store:
        run = store.open_run("r1", "p.X", {"seed": 3})
        assert run["config"] == {"seed": 3}
        assert store.finished_episodes("r1") == {1}
        with pytest.raises(ValueError, match="exists for preset"):
            store.open_run("r1", "p.Y", {})
        with pytest.raises(sqlite3.IntegrityError):
            store.save_episode("r1", _summary(1), {})  # never duplicated
