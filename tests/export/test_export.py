"""Exports from a hand-built forest: selection, chat rows, preference pairs, split, manifest,
and the rows loaded with the ``datasets`` library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magma_core.export import Candidate, ExportForest, ExportSettings, Situation, write_export
from magma_core.export.writers import chat_rows, preference_rows, split_groups
from magma_core.store import scores as sc

TOOLS = [
    {"name": "pick", "description": "Pick an object.", "parameters": {"object": {"type": "str", "description": "object"}}},
    {"name": "place", "description": "Place it.", "parameters": {"area": {"type": "str", "description": "area"}}},
]
ATTRIBUTES = {"objects": ["cube"], "areas": ["zone_a", "zone_b"], "known_robots": ["panda"]}


def agent_input(kind: str, content: str) -> dict:
    return {"id": 0, "instruction": {"type": kind, "content": content}, "tools": TOOLS,
            "attributes": ATTRIBUTES, "memory": {}, "num_outputs": 2, "extra_keys": {}}


def call(name: str, **arguments) -> dict:
    return {"say": "", "tool_calls": [{"name": name, "arguments": arguments, "target_robot_name": "panda"}]}


def forest(trees: int = 1, same: bool = False) -> ExportForest:
    """Per tree: s0 -> c1 pick (ongoing) -> s1 -> c3 place zone_a (optimal, task done)
                                             -> c4 place zone_b (failed)
                  s0 -> c2 say (ongoing leaf)
    Each tree's user words differ (tree 0: "Put the cube in zone_a."), unless ``same``."""
    f = ExportForest(sources=[{"kind": "test"}])
    for t in range(trees):
        p = f"t{t}:"
        words = "Put the cube in zone_a." if same or t == 0 else f"Put the cube in zone_a ({t})."
        f.situations[p + "s0"] = Situation(p + "s0", f"tree{t}", agent_input("user", words))
        f.situations[p + "s1"] = Situation(p + "s1", f"tree{t}", agent_input("env", '{"infos": "picked"}'), p + "c1")
        f.candidates[p + "c1"] = Candidate(p + "c1", p + "s0", 0, sc.ONGOING, call("pick", object="cube"), p + "s1")
        f.candidates[p + "c2"] = Candidate(p + "c2", p + "s0", 0, sc.ONGOING, {"say": "Hm?", "tool_calls": []})
        f.candidates[p + "c3"] = Candidate(p + "c3", p + "s1", 0, sc.OPTIMAL, call("place", area="zone_a"))
        f.candidates[p + "c4"] = Candidate(p + "c4", p + "s1", 0, sc.ERROR, call("place", area="zone_b"))
    return f


def test_selection_follows_the_scores():
    kept, scores = forest().selected()
    # c1: stage 0 has 1 optimal of 2 ends -> 0.4 * 0.5; c2 is a leaf -> 0; c3 0.4; c4 0.
    assert scores["t0:c1"] == pytest.approx(0.2) and scores["t0:c3"] == pytest.approx(0.4)
    assert kept == {"t0:c1", "t0:c3"}


def test_a_chat_row_is_the_kept_path_in_openai_format():
    (group, row), = chat_rows(forest(), ExportSettings())
    assert group == "tree0"
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    first, last = row["messages"][2], row["messages"][4]
    assert first["tool_calls"][0]["function"] == {"name": "pick", "arguments": '{"object": "cube"}'}
    assert row["messages"][3]["tool_call_id"] == first["tool_calls"][0]["id"]
    assert json.loads(last["tool_calls"][0]["function"]["arguments"]) == {"area": "zone_a"}
    assert sorted(t["function"]["name"] for t in row["tools"]) == ["pick", "place"]
    assert row["tools"][0]["function"]["parameters"]["type"] == "object"


def test_preference_pairs_contrast_siblings():
    rows = preference_rows(forest(), ExportSettings())
    pairs = {row["id"]: row for _, row in rows}
    assert set(pairs) == {"t0:c1>t0:c2", "t0:c3>t0:c4"}
    pair = pairs["t0:c3>t0:c4"]
    assert [m["role"] for m in pair["prompt"]] == ["system", "user", "assistant", "tool"]
    assert "zone_a" in pair["chosen"][0]["tool_calls"][0]["function"]["arguments"]
    assert "zone_b" in pair["rejected"][0]["tool_calls"][0]["function"]["arguments"]


def test_the_split_is_by_tree_and_seeded():
    groups = [f"tree{i}" for i in range(20)]
    train, validation = split_groups(groups, 0.1, 42)
    assert len(validation) == 2 and not set(train) & set(validation)
    assert split_groups(groups, 0.1, 42) == (train, validation)
    assert split_groups(["only"], 0.5, 1) == (["only"], [])
    # a tiny generation never sends half of itself to validation: 2 trees at 0.05 -> none
    assert split_groups(groups[:2], 0.05, 1) == (sorted(groups[:2]), [])
    assert len(split_groups(groups[:2], 0.5, 1)[1]) == 1


def test_a_split_that_rounds_to_no_validation_tree_says_so(tmp_path):
    report = write_export(forest(trees=2), ExportSettings(validation_ratio=0.05), tmp_path / "out")
    assert report.rows == {"train": 2, "validation": 0}
    [warning] = report.warnings
    assert "0.05 of 2 trees rounds to no validation tree" in warning and "at least 10 trees" in warning
    assert write_export(forest(trees=2), ExportSettings(validation_ratio=0.5), tmp_path / "b").warnings == []


def test_rows_carry_the_messages_as_the_model_received_them():
    """A run whose reports went to the model as user messages (``--report-role user``) and
    compact prompts exports them so: the report in a user message, enums in the schemas."""
    f = forest()
    f.sources = [{"kind": "run", "config": {"agent_options": {"report_role": "user"}}}]
    (_, row), = chat_rows(f, ExportSettings())
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant"]
    assert row["messages"][3]["content"] == "(reported in the next message)"
    assert row["messages"][4]["content"] == "[environment] picked"  # compact: the report as text
    place = next(t for t in row["tools"] if t["function"]["name"] == "place")
    assert place["function"]["parameters"]["properties"]["area"].get("enum") is None  # no values_from
    assert "Areas: zone_a, zone_b." in row["messages"][0]["content"]
    f.sources = [{"kind": "run", "config": {"agent_options": {"prompt_style": "raw"}}}]
    (_, raw), = chat_rows(f, ExportSettings())
    assert [m["role"] for m in raw["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert raw["messages"][3]["content"] == '{"infos": "picked"}' and "Task attributes:" in raw["messages"][0]["content"]


def test_files_manifest_and_an_unchanged_export_is_skipped(tmp_path: Path):
    f = forest(trees=4)
    settings = ExportSettings(validation_ratio=0.25)
    report = write_export(f, settings, tmp_path / "out")
    assert not report.skipped and report.rows == {"train": 3, "validation": 1}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert set(manifest["files"]) == {"chat_train.jsonl", "chat_validation.jsonl"}
    assert manifest["split"]["validation"] and manifest["settings"]["validation_ratio"] == 0.25
    assert write_export(f, settings, tmp_path / "out").skipped
    (tmp_path / "out" / "chat_train.jsonl").write_text("tampered\n")
    assert not write_export(f, settings, tmp_path / "out").skipped
    assert not write_export(f, ExportSettings(validation_ratio=0.5), tmp_path / "out").skipped


def test_the_jsonl_loads_with_datasets_and_has_the_chat_fields(tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the dev extra installs datasets (make test's install step)")
    write_export(forest(trees=3), ExportSettings(validation_ratio=0.34), tmp_path)
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "chat_train.jsonl"), split="train")
    assert len(loaded) == 2
    row = loaded[0]
    assert set(row) >= {"messages", "tools"}
    assert [m["role"] for m in row["messages"]][:2] == ["system", "user"]
    assistant = row["messages"][2]
    assert assistant["tool_calls"][0]["type"] == "function"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"object": "cube"}
    tool = row["messages"][3]
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert row["tools"][0]["type"] == "function"


def test_the_hf_format_writes_parquet_splits(tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the dev extra installs datasets (make test's install step)")
    report = write_export(forest(trees=3), ExportSettings(format="hf", validation_ratio=0.34), tmp_path)
    assert set(report.files) == {"hf/train.parquet", "hf/validation.parquet"}
    loaded = datasets.load_dataset("parquet", data_files={"train": str(tmp_path / "hf/train.parquet")})
    row = loaded["train"][0]
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert json.loads(row["tools"])[0]["type"] == "function"


def test_duplicate_conversations_are_dropped_counted_and_kept_on_request(tmp_path):
    """Three trees that say and do the same: one row, "dropped 2"; --keep-duplicates keeps 3.
    (Rows differ only by their per-row tool-order shuffle, so identity ignores it.)"""
    report = write_export(forest(trees=3, same=True), ExportSettings(validation_ratio=0), tmp_path / "a")
    assert report.rows == {"train": 1, "validation": 0} and report.duplicates_dropped == 2
    assert any(w.startswith("dropped 2 duplicate conversation(s)") and "--keep-duplicates" in w
               for w in report.warnings)
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["duplicates_dropped"] == 2
    kept = write_export(forest(trees=3, same=True),
                        ExportSettings(validation_ratio=0, keep_duplicates=True), tmp_path / "b")
    assert kept.rows == {"train": 3, "validation": 0} and kept.duplicates_dropped == 0
    distinct = write_export(forest(trees=3), ExportSettings(validation_ratio=0), tmp_path / "c")
    assert distinct.rows["train"] == 3 and distinct.duplicates_dropped == 0
