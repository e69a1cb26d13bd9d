"""``magma gen`` on a definition (each tree its own generated task) and ``--randomized`` (each
tree its own vocabulary), on the real simulator: tasks kept in the store, restores that run
the tree's task in any slot, a kill -9 resume, and the export."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from gen.kill_resume import gen_command, kill_after, run
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.gen.assembly import prepare_generation
from magma_core.protocol.agent import AgentDecision
from magma_core.simulation.tasks import task_to_json
from magma_scenarios.sorting.definitions import LongSorting

pytestmark = pytest.mark.sim

CANONICAL = re.compile(r"(?<![A-Za-z0-9_])(red_cube|green_cube|blue_cube|yellow_cube|zone_a|"
                       r"zone_b|zone_c|pick|place|detect_objects)(?![A-Za-z0-9_])")


def _grow(folder: Path, name: str, *, randomized: bool, nodes: int = 24):
    from magma_core.runs.assembly import open_executor

    parts = prepare_generation("sorting.LongSorting", "noisy-trace:0.3", seed=3, trees=2,
                               randomized=randomized)
    store = GenerationStore(folder / "magma.db")
    store.open_generation(name, "sorting.LongSorting", {})
    executor = open_executor(parts.task, 2, 3, None, "cpu")
    settings = GenSettings(branches=2, max_nodes=nodes, trees=2, seed=3, max_per_stage=2)
    Generator(parts.task, parts.agent, executor, store, name, settings, trees=parts.trees).run()
    return store, executor, parts


@pytest.fixture(scope="module")
def definition_gen(tmp_path_factory):
    store, executor, parts = _grow(tmp_path_factory.mktemp("def"), "d", randomized=False)
    yield store, executor, parts
    executor.close()
    store.close()


def test_each_tree_runs_and_stores_its_seeds_task(definition_gen):
    store, _, _ = definition_gen
    trees = store.trees("d")
    assert [t["seed"] for t in trees] == [3, 4]
    for t in trees:
        assert t["task"] == task_to_json(LongSorting().generate(t["seed"]), indent=None)
        assert t["vocabulary"] is None
    assert trees[0]["task"] != trees[1]["task"]
    roots = {s.tree: s for s in store.situations("d") if s.parent is None}
    first = {t: LongSorting().generate(3 + t).stages[0].stage_input.instruction.content for t in (0, 1)}
    assert first[0] != first[1]
    for t in (0, 1):
        assert first[t] in roots[t].agent_input["instruction"]["content"]
    # the reference decisions of each tree pass its own first stage
    candidates = store.candidates("d")
    for t in (0, 1):
        assert any(c.tree == t and c.stage == 0 and c.end_status == "optimal" for c in candidates)


def test_a_restored_snapshot_runs_its_trees_task_in_any_slot(definition_gen):
    store, executor, parts = definition_gen
    tasks = {t["tree"]: parts.trees.load(t["seed"], t["task"], None).task for t in store.trees("d")}
    checked = set()
    for c in store.candidates("d"):
        if c.execution is None or c.tree in checked:
            continue
        snapshot = executor.snapshot_from_bytes(store.snapshot_blob("d", c.situation), tasks[c.tree])
        slot = 1 - len(checked)  # the other tree's last slot, whatever it ran before
        executor.restore(slot, snapshot)
        assert executor.task_of(slot) is tasks[c.tree]
        assert executor.task_of(slot).name == f"LongSorting #{3 + c.tree}"
        replay = executor.submit({slot: AgentDecision.model_validate(c.output).to_decision()})[slot]
        again, recorded = replay.to_dict(), dict(c.execution)
        for d in (recorded, again):
            d.pop("slot", None), d.pop("next_view", None), d.pop("step_index", None)
        assert json.loads(json.dumps(again, default=str)) == recorded
        checked.add(c.tree)
    assert checked == {0, 1}


def test_randomized_trees_see_their_own_public_vocabulary(tmp_path):
    store, executor, _ = _grow(tmp_path, "r", randomized=True, nodes=16)
    try:
        trees = store.trees("r")
        mappings = [json.loads(t["vocabulary"]) for t in trees]
        assert mappings[0] != mappings[1]
        for t, mapping in zip(trees, mappings, strict=True):
            assert json.loads(t["task"])["randomization"] == mapping
            public = {tool["name"] for tool in mapping["tools"]}
            assert {tool["name"] for tool in t["tools"]} <= public
        situations = store.situations("r")
        candidates = store.candidates("r")
        text = json.dumps([[s.agent_input["tools"], s.agent_input["instruction"]] for s in situations]
                          + [c.output for c in candidates])
        assert CANONICAL.search(text) is None, CANONICAL.search(text)
        assert any(c.end_status == "optimal" for c in candidates)  # public names reach the engine
        from magma_core.export import ExportSettings, load_forest, write_export

        forest = load_forest(store.path, "r")
        assert [t["randomization"] for t in forest.sources[0]["trees"]] == mappings
        report = write_export(forest, ExportSettings(format="chat-jsonl", validation_ratio=0.0),
                              tmp_path / "export")
        rows = [json.loads(line) for f in report.files if f.endswith(".jsonl")
                for line in (report.output / f).read_text().splitlines()]
        assert rows and CANONICAL.search(json.dumps(rows)) is None
    finally:
        executor.close()
        store.close()


def _gen_cmd(folder: Path, nodes: int) -> list[str]:
    return gen_command(folder, "sorting.LongSorting", nodes, "--randomized")


def test_a_killed_definition_generation_resumes_and_exports(tmp_path):
    db = tmp_path / "magma.db"
    before = kill_after(_gen_cmd(tmp_path, 30), db, 8)
    assert 8 <= before < 30
    with GenerationStore(db) as store:
        trees_before = store.trees("k")
    done = run(_gen_cmd(tmp_path, 30))
    assert done.returncode == 0, done.stderr[-2000:]
    with GenerationStore(db) as store:
        candidates = store.candidates("k")
        trees = store.trees("k")
    assert len(candidates) == 30 == len({(c.situation, c.candidate_index) for c in candidates})
    assert [t["task"] for t in trees[: len(trees_before)]] == [t["task"] for t in trees_before]
    assert {json.loads(t["task"])["name"] for t in trees} == {"LongSorting #0", "LongSorting #1"}
    plain = [a for a in _gen_cmd(tmp_path, 30) if a != "--randomized"]
    refused = run(plain)
    assert refused.returncode == 2 and "randomized" in refused.stderr
    exported = run([sys.executable, "-m", "magma_core.cli", "export", "k", "--format",
                    "preference-jsonl", "--out", str(tmp_path)], timeout=300)
    assert exported.returncode == 0, exported.stderr[-2000:]
    manifest = json.loads((tmp_path / "exports" / "k-preference-jsonl" / "manifest.json").read_text())
    assert [t["task"] for t in manifest["sources"][0]["trees"]] == ["LongSorting #0", "LongSorting #1"]
