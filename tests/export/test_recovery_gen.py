"""``magma gen`` on the real simulator, then ``magma export --format chat-jsonl``, through the
CLI: a coached generation exports its repair as mistake (weight 0) → report → fix, a trace
generation of the perturbed training tasks exports the slip and the grasp that worked up to the
final answer, and the manifest's counts per kind are those of the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magma_core.cli import main
from magma_core.export.kinds import dialogue_identity

pytestmark = pytest.mark.sim


def gen_and_export(tmp_path: Path, *gen: str, export: tuple[str, ...] = ()) -> tuple[list[dict], dict]:
    out = tmp_path / "runs"
    assert main(["gen", *gen, "--slots", "2", "--out", str(out), "--name", "g"]) == 0
    assert main(["export", "g", "--format", "chat-jsonl", "--validation-ratio", "0", "--out", str(out),
                 "--output", str(tmp_path / "rows"), *export]) == 0
    rows = [json.loads(line) for line in (tmp_path / "rows" / "chat_train.jsonl").open()]
    return rows, json.loads((tmp_path / "rows" / "manifest.json").read_text())


def assert_counts_match(rows: list[dict], manifest: dict) -> None:
    for kind, counts in manifest["kinds"].items():
        mine = [r for r in rows if r["kind"] == kind]
        assert counts["rows"] == len(mine), kind
        assert counts["conversations"] == len({dialogue_identity(r) for r in mine}), kind
        assert counts["complete"] == sum(r["complete"] for r in mine), kind
    assert sum(c["rows"] for c in manifest["kinds"].values()) == len(rows) == manifest["rows"]["train"]


def assistant_turns(messages: list[dict]) -> list[tuple[str, ...]]:
    return [tuple(c["function"]["name"] + c["function"]["arguments"] for c in m.get("tool_calls") or [])
            or (m["content"],) for m in messages if m["role"] == "assistant"]


def test_a_coached_generation_exports_the_mistake_its_report_and_the_fix(tmp_path: Path):
    rows, manifest = gen_and_export(tmp_path, "sorting.ShortSorting", "--agent", "noisy-trace:0.3",
                                    "--branches", "2", "--coach", "trace", "--trees", "2", "--seed", "0",
                                    "--max-nodes", "40", export=("--keep-duplicates",))
    assert_counts_match(rows, manifest)
    coached = [r for r in rows if r["kind"] == "coached"]
    assert coached and manifest["kinds"]["coached"]["rows"] == len(coached)
    for row in coached:
        messages = row["messages"]
        wrong = next(i for i, m in enumerate(messages) if m.get("weight") == 0)
        assert messages[wrong]["role"] == "assistant"
        fix = next(i for i in range(wrong + 1, len(messages)) if messages[i]["role"] == "assistant")
        reports = messages[wrong + 1:fix]
        # what the environment said back to the agent about the wrong decision, as it was sent
        assert reports and all(m["role"] in ("tool", "user") and m["content"] for m in reports)
        assert "weight" not in messages[fix]
        assert assistant_turns([messages[wrong]]) != assistant_turns([messages[fix]])
    # a fixed repair's mistake row beside its repaired path (kept whole: --keep-duplicates): the
    # same decisions, less the mistake
    assert any("@" in r["id"] for r in coached)
    for row in (r for r in coached if "@" in r["id"]):
        clean = next(r for r in rows if r["id"] == row["id"].split("@")[0])
        kept = [m for m in row["messages"] if m.get("weight") != 0]
        assert assistant_turns(kept) == assistant_turns(clean["messages"])


def test_a_trace_generation_of_perturbed_tasks_exports_the_slip_recovery_whole(tmp_path: Path):
    rows, manifest = gen_and_export(tmp_path, "sorting.PerturbedPairSortingTrain", "--agent", "trace",
                                    "--branches", "1", "--trees", "2", "--seed", "0")
    assert_counts_match(rows, manifest)
    slipped = [r for r in rows if any(m["role"] == "tool" and "slipped" in m["content"] for m in r["messages"])]
    assert len(slipped) == 1  # tree 1 is seed 1: a grasp slip
    row = slipped[0]
    messages = row["messages"]
    at = next(i for i, m in enumerate(messages) if m["role"] == "tool" and "slipped" in m["content"])
    failed, retry = messages[at - 1], messages[at + 1]
    assert failed["tool_calls"][0]["function"]["name"] == retry["tool_calls"][0]["function"]["name"] == "pick"
    assert "weight" not in failed  # the world's failure: picking was right, and stays trained on
    assert "succeed" in messages[at + 2]["content"]
    assert row["kind"] == "recovery" and row["complete"]
    assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls") and messages[-1]["content"]
    assert manifest["kinds"]["recovery"] == {"rows": 1, "conversations": 1, "trees": 1, "complete": 1,
                                             "masked_turns": 0}
