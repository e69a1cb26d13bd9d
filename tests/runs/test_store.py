"""The SQLite run store: atomic episodes, resume bookkeeping, WAL, refusal of mismatches."""

import json
import sqlite3

import pytest

from magma_core.store import EpisodeRows, EpisodeSummary, RunStore
from magma_core.user_error import UserError


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
        with pytest.raises(UserError, match="exists for preset"):
            store.open_run("r1", "p.Y", {})
        with pytest.raises(sqlite3.IntegrityError):
            store.save_episode("r1", _summary(1), {})  # never duplicated


def test_jsonl_export_of_episodes_and_steps(tmp_path):
    import io

    from magma_core.export.run_jsonl import export_jsonl

    store = RunStore(tmp_path / "magma.db")
    store.open_run("r1", "p.X", {})
    record = {
        "task": "T", "seed": 100, "status": "success",
        "steps": [
            {"step_index": 0, "stage_index": 0, "inputs": [{"kind": "user", "content": "go"}],
             "decision": {"say": "", "tool_calls": [{"name": "pick"}]},
             "calls": [{"robot": "panda", "tool": "pick", "arguments": {}, "ok": True,
                        "message": "ok", "failure_flag": "none", "context": {"x": 1}}],
             "stage_success": "FINISH", "stage_state": "OPTIMAL"},
            {"step_index": 1, "stage_index": 1, "inputs": [], "decision": {"say": "done"},
             "calls": [], "stage_success": "FINISH", "stage_state": "OPTIMAL"},
        ],
    }
    store.save_episode("r1", _summary(0), record)
    store.save_episode("r1", _summary(1), {**record, "steps": []})
    out = io.StringIO()
    assert export_jsonl(store, "r1", "steps", out) == 2
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["episode"], r["step"]) for r in rows] == [(0, 0), (0, 1)]
    assert rows[0]["calls"][0] == {"robot": "panda", "tool": "pick", "arguments": {}, "ok": True,
                                   "message": "ok", "failure_flag": "none"}
    assert rows[1]["decision"] == {"say": "done"}
    out = io.StringIO()
    assert export_jsonl(store, "r1", "episodes", out) == 2
    assert [json.loads(line)["episode"] for line in out.getvalue().splitlines()] == [0, 1]
    with pytest.raises(ValueError, match="unknown export kind"):
        export_jsonl(store, "r1", "parquet", out)


def test_a_run_without_episodes_restarts_with_new_options(tmp_path):
    store = RunStore(tmp_path / "magma.db")
    store.open_run("r", "p.X", {"agent": "trace"})
    run = store.open_run("r", "p.Y", {"agent": "openai:m"})  # nothing stored: a fresh start
    assert run["preset"] == "p.Y" and run["config"] == {"agent": "openai:m"}
    store.save_episode("r", _summary(0), {})
    store.update_config("r", {"agent": "openai:m", "episodes": 4})
    assert store.get_run("r")["config"] == {"agent": "openai:m", "episodes": 4}
    with pytest.raises(UserError, match="exists for preset"):
        store.open_run("r", "p.X", {})


def test_a_store_of_another_schema_version_is_refused(tmp_path):
    path = tmp_path / "magma.db"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(sqlite3.DatabaseError, match="schema version 1"):
        RunStore(path)


def test_resume_selects_exactly_the_episodes_not_stored_in_order(tmp_path):
    from magma_core.runs.loop import RunLoop

    with RunStore(tmp_path / "magma.db") as store:
        store.open_run("r", "p.X", {})
        store.open_run("other", "p.X", {})
        assert store.pending_episodes("r", 4) == [0, 1, 2, 3]
        for k in (0, 2, 5):
            store.save_episode("r", _summary(k), {})
        store.save_episode("other", _summary(1), {})  # another run's episodes do not count
        assert store.pending_episodes("r", 7) == [1, 3, 4, 6]
        assert store.pending_episodes("r", 3) == [1]  # stored beyond the range: ignored
        assert store.pending_episodes("r", 1) == []
        loop = RunLoop(None, None, None, store, "r", episodes=7, seed=0)  # type: ignore[arg-type]
        assert list(loop.pending()) == [1, 3, 4, 6]
