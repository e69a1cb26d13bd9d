"""Chat rows that hold mistakes and recoveries, from hand-built forests: which turns are masked
(``"weight": 0``), the mistake row of a coached repair, each row's ``kind``, and the manifest's
counts per kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from magma_core.export import Candidate, ExportForest, ExportSettings, Situation, write_export
from magma_core.export.kinds import (
    AGENT,
    CONDITIONS,
    INJECTED,
    SYSTEM,
    condition_of,
    dialogue_identity,
    failure_of,
    kind_counts,
)
from magma_core.export.writers import chat_rows
from magma_core.store import scores as sc

TOOLS = [
    {"name": "pick", "description": "Pick an object.", "parameters": {"object": {"type": "str", "description": "object"}}},
    {"name": "place", "description": "Place it.", "parameters": {"area": {"type": "str", "description": "area"}}},
]
ATTRIBUTES = {"objects": ["cube"], "areas": ["zone_a", "zone_b"], "known_robots": ["panda"]}
HOLDS = "panda: pick failed with message: The gripper already holds an object; place it first."


def agent_input(kind: str, content: str) -> dict:
    return {"id": 0, "instruction": {"type": kind, "content": content}, "tools": TOOLS,
            "attributes": ATTRIBUTES, "memory": {}, "num_outputs": 2, "extra_keys": {}}


def report(text: str) -> dict:
    return agent_input("env", json.dumps({"infos": text}))


def call(name: str, **arguments) -> dict:
    return {"say": "", "tool_calls": [{"name": name, "arguments": arguments, "target_robot_name": "panda"}]}


def repaired(*, recovery: bool = True, mistake_ok_calls: int = 0, mistake_reported: bool = True) -> ExportForest:
    """s0 -> c1 pick (ok) -> s1 -> c2 pick again (refused: the agent's mistake) -> s2 (its report)
                              s1 -> c3 place zone_a: the coach's fix of c2 (optimal, task done)
                                    s2 -> c4 place zone_a: the coach's recovery after c2's report"""
    f = ExportForest(sources=[{"kind": "test"}])
    f.situations["s0"] = Situation("s0", "tree0", agent_input("user", "Put the cube in zone_a."))
    f.situations["s1"] = Situation("s1", "tree0", report("panda: pick succeed with message: Picked the cube."), "c1")
    f.candidates["c1"] = Candidate("c1", "s0", 0, sc.ONGOING, call("pick", object="cube"), "s1", ok_calls=1)
    f.candidates["c2"] = Candidate("c2", "s1", 0, sc.ONGOING, call("pick", object="cube"),
                                   "s2" if mistake_reported else None, failure=AGENT, ok_calls=mistake_ok_calls)
    if mistake_reported:
        f.situations["s2"] = Situation("s2", "tree0", report(HOLDS), "c2")
    f.candidates["c3"] = Candidate("c3", "s1", 0, sc.OPTIMAL, call("place", area="zone_a"), ok_calls=1,
                                   final=True, origin="coached", repairs="c2")
    f.repairs = [("c3", "c2")]
    if recovery and mistake_reported:
        f.candidates["c4"] = Candidate("c4", "s2", 0, sc.SUBOPTIMAL, call("place", area="zone_a"), ok_calls=1,
                                       final=True, origin="recovery", repairs="c2")
        f.repairs.append(("c4", "c2"))
    return f


def turns(row: dict) -> list[tuple[str, str, int]]:
    """(role, what it says or calls, weight) per message after the system message."""
    out = []
    for m in row["messages"][1:]:
        said = " ".join(c["function"]["name"] for c in m.get("tool_calls") or []) or str(m.get("content"))
        out.append((m["role"], said, m.get("weight", 1)))
    return out


def rows_by_id(forest: ExportForest) -> dict[str, dict]:
    return {row["id"]: row for _, row in chat_rows(forest, ExportSettings())}


@pytest.mark.parametrize(("execution", "expected"), [
    ({"calls": [{"ok": True}], "stage_success": "ONGOING", "verification": 0}, (None, 1)),
    ({"calls": [{"ok": False, "failure_flag": "none"}], "stage_success": "ONGOING"}, (AGENT, 0)),
    ({"calls": [{"ok": False, "failure_flag": "bad_call"}], "stage_success": "FAILED"}, (AGENT, 0)),
    ({"calls": [{"ok": False, "failure_flag": "injection_error", "injected": True}]}, (INJECTED, 0)),
    ({"calls": [{"ok": True}, {"ok": False, "failure_flag": "planner_error"}]}, (SYSTEM, 1)),
    ({"calls": [{"ok": False, "injected": True}, {"ok": False, "failure_flag": "none"}]}, (AGENT, 0)),
    ({"calls": [], "stage_success": "ONGOING", "verification": None}, (AGENT, 0)),  # no action
    ({"calls": [], "stage_success": "FINISH", "verification": 1}, (None, 0)),  # an accepted answer
    ({"calls": [], "stage_success": "ONGOING", "verification": 0}, (None, 0)),  # a judged answer
])
def test_failure_of_tells_the_agents_mistakes_from_the_worlds_failures(execution, expected):
    assert failure_of(execution) == expected


def test_a_coached_recovery_reads_mistake_report_fix_with_the_mistake_masked():
    rows = rows_by_id(repaired())
    recovery = rows["c4"]
    assert turns(recovery) == [("user", "Put the cube in zone_a.", 1), ("assistant", "pick", 1),
                               ("tool", "panda: pick succeed with message: Picked the cube.", 1),
                               ("assistant", "pick", 0), ("tool", HOLDS, 1), ("assistant", "place", 1)]
    tool_call = recovery["messages"][4]["tool_calls"][0]["id"]
    assert recovery["messages"][5]["tool_call_id"] == tool_call  # the report answers the mistake
    assert recovery["kind"] == "coached" and recovery["origin"] == "recovery" and recovery["complete"]
    # the fixed repair's clean path is exported too, and its twin after the report is not
    # (the recovery's row is the conversation that happened)
    assert rows["c3"]["kind"] == "clean" and rows["c3"]["origin"] == "coached"
    assert [t[1] for t in turns(rows["c3"]) if t[0] == "assistant"] == ["pick", "place"]
    assert not any("@" in key for key in rows)


def test_a_fixed_repair_gets_its_mistake_row_when_the_agent_was_told_and_the_world_is_unchanged():
    rows = rows_by_id(repaired(recovery=False))
    row = rows["c3@c2"]
    assert [(role, w) for role, _, w in turns(row)] == [("user", 1), ("assistant", 1), ("tool", 1),
                                                        ("assistant", 0), ("tool", 1), ("assistant", 1)]
    assert turns(row)[4][1] == HOLDS and turns(row)[5][1] == "place"
    assert row["kind"] == "coached" and row["complete"]
    assert rows["c3"]["kind"] == "clean"


@pytest.mark.parametrize("variant", [{"mistake_ok_calls": 1}, {"mistake_reported": False}])
def test_no_mistake_row_where_no_run_could_have_had_that_conversation(variant):
    """A mistake whose call succeeded changed the world the fix was not executed in; one that
    ended the branch was never reported to the agent: only the repaired path is exported."""
    rows = rows_by_id(repaired(recovery=False, **variant))
    assert set(rows) == {"c3"} and rows["c3"]["kind"] == "clean"


def test_the_agents_own_mistake_is_masked_and_a_slip_is_not():
    f = ExportForest(sources=[{"kind": "test"}])
    f.situations["s0"] = Situation("s0", "tree0", agent_input("user", "Put the cube in zone_a."))
    f.situations["s1"] = Situation("s1", "tree0", report("No action: the decision called no tool."), "c1")
    f.situations["s2"] = Situation("s2", "tree0", report("panda: pick failed with message: It slipped."), "c2")
    f.situations["s3"] = Situation("s3", "tree0", report("panda: pick succeed with message: Picked."), "c3")
    f.candidates["c1"] = Candidate("c1", "s0", 0, sc.ONGOING, {"say": "Hm?", "tool_calls": []}, "s1", failure=AGENT)
    f.candidates["c2"] = Candidate("c2", "s1", 0, sc.ONGOING, call("pick", object="cube"), "s2", failure=INJECTED)
    f.candidates["c3"] = Candidate("c3", "s2", 0, sc.ONGOING, call("pick", object="cube"), "s3", ok_calls=1)
    f.candidates["c4"] = Candidate("c4", "s3", 0, sc.OPTIMAL, call("place", area="zone_a"), ok_calls=1, final=True)
    (_, row), = chat_rows(f, ExportSettings())
    assert [w for role, _, w in turns(row) if role == "assistant"] == [0, 1, 1, 1]
    assert row["kind"] == "recovery" and row["origin"] == "model"


def test_kinds_follow_what_the_row_holds():
    f = ExportForest(sources=[{"kind": "test"}], conditions={"tree1": "interruption"})
    for t in (0, 1, 2):
        f.situations[f"t{t}s0"] = Situation(f"t{t}s0", f"tree{t}", agent_input("user", f"Put the cube in zone_a ({t})."))
    f.candidates["t0c"] = Candidate("t0c", "t0s0", 0, sc.OPTIMAL, call("place", area="zone_a"), ok_calls=1)
    f.candidates["t1c"] = Candidate("t1c", "t1s0", 0, sc.OPTIMAL, call("place", area="zone_a"), ok_calls=1)
    f.situations["t2s1"] = Situation("t2s1", "tree2", report("panda: pick failed with message: It slipped."), "t2c")
    f.candidates["t2c"] = Candidate("t2c", "t2s0", 0, sc.ONGOING, call("pick", object="cube"), "t2s1", failure=INJECTED)
    f.candidates["t2d"] = Candidate("t2d", "t2s1", 0, sc.SUBOPTIMAL, {"say": "Done.", "tool_calls": []}, failure=AGENT)
    rows = rows_by_id(f)
    # a failure with nothing that worked after it is no recovery, but an injected error is a perturbation
    assert {k: r["kind"] for k, r in rows.items()} == {"t0c": "clean", "t1c": "perturbed", "t2d": "perturbed"}


def test_the_manifest_counts_rows_dialogues_and_trees_per_kind(tmp_path: Path):
    f = repaired()
    report_ = write_export(f, ExportSettings(validation_ratio=0, keep_duplicates=True), tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    rows = [json.loads(line) for line in (tmp_path / "chat_train.jsonl").open()]
    assert manifest["kinds"] == report_.kinds
    for kind, counts in manifest["kinds"].items():
        mine = [r for r in rows if r["kind"] == kind]
        assert counts["rows"] == len(mine)
        assert counts["conversations"] == len({dialogue_identity(r) for r in mine})
        assert counts["complete"] == sum(r["complete"] for r in mine)
        assert counts["masked_turns"] == sum(m.get("weight") == 0 for r in mine for m in r["messages"])
    assert manifest["kinds"]["coached"]["rows"] == 1 and manifest["kinds"]["clean"]["rows"] == 1
    assert sum(c["rows"] for c in manifest["kinds"].values()) == sum(manifest["rows"].values())


def test_an_empty_chat_export_still_counts_every_kind(tmp_path: Path):
    write_export(ExportForest(sources=[{"kind": "test"}]), ExportSettings(), tmp_path)
    kinds = json.loads((tmp_path / "manifest.json").read_text())["kinds"]
    assert set(kinds) == {"clean", "coached", "recovery", "perturbed"}
    assert all(c["rows"] == 0 for c in kinds.values())


def test_a_dialogue_is_counted_once_whatever_its_system_message_says():
    row = {"messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "go"}]}
    other = {"messages": [{"role": "system", "content": "b"}, {"role": "user", "content": "go"}]}
    masked = {"messages": [*other["messages"], {"role": "assistant", "content": "x", "weight": 0}]}
    trained = {"messages": [*other["messages"], {"role": "assistant", "content": "x"}]}
    assert dialogue_identity(row) == dialogue_identity(other)
    assert dialogue_identity(masked) != dialogue_identity(trained)
    counts = kind_counts([("t0", {**row, "kind": "clean"}), ("t1", {**other, "kind": "clean"})])
    assert counts["clean"] == {"rows": 2, "conversations": 1, "trees": 2, "complete": 0, "masked_turns": 0}


def test_conditions_are_the_benchs_and_a_task_name_says_which():
    from magma_core.bench.conditions import CLEAN
    from magma_core.bench.conditions import CONDITIONS as BENCH

    assert set(CONDITIONS) == set(BENCH) - {CLEAN}
    assert condition_of("PairSortingTrain#3.mission_update") == "mission_update"
    assert condition_of("sorting_pair.s1.v0.execution_error") == "execution_error"
    assert condition_of("cube.PickPlace") is None and condition_of(None) is None


def test_the_hf_rows_keep_weights_kind_and_completeness(tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the dev extra installs datasets (make test's install step)")
    write_export(repaired(), ExportSettings(format="hf", validation_ratio=0), tmp_path)
    loaded = datasets.load_dataset("parquet", data_files={"train": str(tmp_path / "hf/train.parquet")})["train"]
    by_id = {r["id"]: r for r in loaded}
    assert by_id["c4"]["kind"] == "coached" and by_id["c4"]["complete"] is True
    assert [m["weight"] for m in by_id["c4"]["messages"] if m["role"] == "assistant"] == [1, 0, 1]


def test_a_run_episode_says_its_failures_its_condition_and_its_end():
    from magma_core.export.sources import _add_episode

    def step(n: int, calls: list[dict], status: str = "running", success: str = "ONGOING") -> dict:
        return {"stage_index": 0, "inputs": [{"kind": "user" if n == 0 else "env", "content": f"input {n}"}],
                "decision": {"say": "", "tool_calls": [{"name": c["tool"], "arguments": {}} for c in calls]},
                "calls": calls, "stage_success": success, "stage_state": "OPTIMAL", "status": status,
                "verification": None if success == "ONGOING" else 1}

    slip = {"tool": "pick", "ok": False, "failure_flag": "injection_error", "injected": True}
    record = {"robot_names": ["panda"], "steps": [
        step(0, [slip]), step(1, [{"tool": "pick", "ok": True}]),
        step(2, [{"tool": "place", "ok": True}], "success", "FINISH")]}
    f = ExportForest(sources=[{"kind": "test"}])
    _add_episode(f, "r", 0, record, TOOLS, ATTRIBUTES, condition="execution_error")
    assert [(c.failure, c.ok_calls, c.final) for c in f.candidates.values()] == [
        (INJECTED, 0, False), (None, 1, False), (None, 1, True)]
    assert f.conditions == {"r:e0": "execution_error"}
    (_, row), = chat_rows(f, ExportSettings())
    assert row["kind"] == "recovery" and row["complete"]
