"""Coaching in ``magma gen`` on the real simulator: the trace coach turns failed branches into
coached continuations that the engine validates, on a preset and on a definition; a repair the
engine does not validate is never counted as a success; kill -9 resumes coaching with nothing
lost or duplicated."""

from __future__ import annotations

from pathlib import Path

import pytest

from gen.kill_resume import gen_command, kill_after, run
from magma_core.gen import GenerationStore, Generator, GenSettings
from magma_core.gen.assembly import prepare_generation
from magma_core.gen.coaching import CoachingSettings, CoachReply
from magma_core.protocol.coaching import CoachingProposal, CoachingResponse

pytestmark = pytest.mark.sim


def grow(folder: Path, target: str, coach, nodes: int = 60, noise: float = 0.4):
    from magma_core.runs.assembly import open_executor

    parts = prepare_generation(target, f"noisy-trace:{noise}", seed=0, trees=1)
    store = GenerationStore(folder / "magma.db")
    store.open_generation("c", target, {})
    executor = open_executor(parts.task, 2, 0, parts.judge, "cpu")
    try:
        summary = Generator(parts.task, parts.agent, executor, store, "c",
                            GenSettings(branches=2, max_nodes=nodes, max_per_stage=2),
                            trees=parts.trees, coaching=CoachingSettings(coach)).run()
    finally:
        executor.close()
        parts.agent.close()
    return store, summary


def stage_continuation_finishes(store, candidate) -> bool:
    """Whether ``candidate`` or a descendant in its stage got a FINISH verdict."""
    children = {}
    for c in store.candidates("c"):
        children.setdefault(c.situation, []).append(c)
    todo = [candidate]
    while todo:
        c = todo.pop()
        if (c.execution or {}).get("stage_success") == "FINISH":
            return True
        if c.next_situation is not None:
            todo.extend(x for x in children.get(c.next_situation, []) if x.stage == candidate.stage)
    return False


def check_coaching(store, branches=2):
    rows = {r.id: r for r in store.coaching("c")}
    candidates = {c.id: c for c in store.candidates("c")}
    coached = [c for c in candidates.values() if c.coaching]
    assert len({(r.terminal, r.type) for r in rows.values()}) == len(rows)
    planned = {(p["situation"], p["candidate_index"]) for r in rows.values() for p in r.proposals or []}
    assert {(c.situation, c.candidate_index) for c in coached} <= planned
    for c in coached:
        row = rows[c.coaching["request"]]
        proposal = next(p for p in row.proposals if (p["situation"], p["candidate_index"]) ==
                        (c.situation, c.candidate_index))
        assert c.candidate_index >= branches and c.coaching["role"] == proposal["role"]
        assert c.coaching["source"] == row.source and c.coaching["attempt"] == row.attempt >= 1
        assert proposal["faulty"] in candidates  # the failed branch is kept as evidence
        assert candidates[row.terminal].episode_status != "success"
        if row.outcome == "proven":
            assert any(stage_continuation_finishes(store, x) for x in coached
                       if x.coaching["request"] == row.id)
    return rows, coached


@pytest.mark.parametrize("target", ["sorting.SortAll", "sorting.LongSorting"])
def test_the_trace_coach_turns_failed_branches_into_validated_continuations(tmp_path, target):
    store, summary = grow(tmp_path, target, "trace")
    with store:
        rows, coached = check_coaching(store)
        assert summary["coaching"].get("proven", 0) >= 1
        assert any(r.status == "corrected" and r.request and r.response for r in rows.values())
        situations = {s.id: s for s in store.situations("c")}
        for c in coached:
            row = rows[c.coaching["request"]]
            proposal = next(p for p in row.proposals if p["candidate_index"] == c.candidate_index
                            and p["situation"] == c.situation)
            repair = proposal["extra_keys"]
            assert c.output["tool_calls"] == repair["decision"]["tool_calls"]  # executed as repaired
            if c.next_situation is not None:  # the agent's memory carries on past the repair
                assert situations[c.next_situation].agent_input["memory"]["trace_cursor"] == \
                    repair["reference_index"] + 1
                assert "coaching" not in situations[c.next_situation].agent_input["extra_keys"]


class WrongCoach:
    """Diagnoses the terminal decision and 'repairs' it with a message: never a success."""

    name = "wrong"

    def coach(self, request, context):
        step = request.target_step_id if request.target_step_id is not None else request.trajectory[-1].id
        return CoachReply(CoachingResponse(
            request_id=request.request_id, status="corrected",
            proposals=[CoachingProposal(reinjection_point_id=f"replace:{step}",
                                        extra_keys={"kind": "replace_say", "text": "I give up."})]),
            raw="wrong")

    def close(self):
        pass


def test_a_repair_the_engine_does_not_validate_is_not_a_success(tmp_path):
    store, summary = grow(tmp_path, "sorting.SortAll", WrongCoach(), nodes=50)
    with store:
        rows, coached = check_coaching(store)
        assert coached, "the wrong repairs were executed"
        validated = {r: any(stage_continuation_finishes(store, c) for c in coached
                            if c.coaching["request"] == r) for r in {c.coaching["request"] for c in coached}}
        assert not all(validated.values()), "some wrong repair must have led nowhere"
        for row_id, ok in validated.items():  # proven exactly when the engine validated a continuation
            assert (rows[row_id].outcome == "proven") == ok, rows[row_id]
        assert summary["coaching"].get("proven", 0) == sum(validated.values())


def test_a_killed_coached_generation_resumes_with_nothing_lost_or_duplicated(tmp_path):
    db = tmp_path / "magma.db"
    command = gen_command(tmp_path, "sorting.SortAll", 60, "--coach", "trace")
    before = kill_after(command, db, 25, timeout=180)
    assert 25 <= before < 60
    done = run(command, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "coaching:" in done.stdout
    with GenerationStore(db) as store:
        candidates = store.candidates("k")
        rows = store.coaching("k")
        assert len(candidates) == 60
        assert len({(c.situation, c.candidate_index) for c in candidates}) == 60
        assert not [r for r in rows if r.status == "pending"]
        assert len({(r.terminal, r.type) for r in rows}) == len(rows)
        by_id = {r.id: r for r in rows}
        coached = [c for c in candidates if c.coaching]
        assert all(c.coaching["request"] in by_id for c in coached)
        stored = {(c.situation, c.candidate_index) for c in candidates}
        planned = [(p["situation"], p["candidate_index"]) for r in rows for p in r.proposals]
        assert len(planned) == len(set(planned))
        # every terminal event has its row (routed, or skipped with a reason)
        from magma_core.gen.coaching.manager import _node
        from magma_core.gen.coaching.opportunities import terminal_event

        terminals = {c.id for c in candidates if terminal_event(_node(c))}
        assert terminals <= {r.terminal for r in rows}
        assert sum(p in stored for p in planned) == len(coached)


def test_coached_rows_and_repair_pairs_are_exported(tmp_path):
    import json

    from magma_core.cli import main
    from magma_core.export import ExportSettings, load_forest, write_export

    store, _ = grow(tmp_path, "sorting.SortAll", "trace")
    with store:
        rows = {r.id: r for r in store.coaching("c")}
        candidates = {c.id: c for c in store.candidates("c")}
    proven = [c for c in candidates.values() if c.coaching and rows[c.coaching["request"]].outcome == "proven"]
    assert proven
    forest = load_forest(tmp_path / "magma.db", "c")
    assert forest.repairs
    for chosen, rejected in forest.repairs:  # the repair and the failed decision share the prompt
        assert forest.candidates[chosen].situation == forest.candidates[rejected].situation
        assert forest.candidates[chosen].origin in ("coached", "recovery")
        assert forest.candidates[rejected].origin == "model"
    report = write_export(forest, ExportSettings(format="preference-jsonl", validation_ratio=0), tmp_path / "pref")
    pairs = [json.loads(line) for line in (tmp_path / "pref" / "preference_train.jsonl").read_text().splitlines()]
    repairs = [p for p in pairs if p["origin"] == "repair"]
    assert len(repairs) == len(forest.repairs) and report.rows["train"] == len(pairs)
    for pair in repairs:
        chosen, rejected = pair["id"].split(">")
        chosen_calls = [c["function"]["name"] for c in pair["chosen"][0].get("tool_calls") or []]
        assert chosen_calls == [c["name"] for c in forest.candidates[chosen].decision["tool_calls"]]
        assert pair["chosen"] != pair["rejected"]

    def chat(*extra):
        out = tmp_path / ("chat" + "".join(extra))
        assert main(["export", "c", "--out", str(tmp_path), "--output", str(out), "--validation-ratio", "0",
                     "--min-score", "0", *extra]) == 0
        return [json.loads(line) for line in (out / "chat_train.jsonl").read_text().splitlines()]

    with_coached, without = chat(), chat("--no-coached")
    assert {r["origin"] for r in with_coached} >= {"model"} and \
        {r["origin"] for r in with_coached} & {"coached", "recovery"}
    assert {r["origin"] for r in without} == {"model"}
    coached_keys = {f"c:c{c.id}" for c in candidates.values() if c.coaching}
    assert not any(m for r in without for m in [r["id"]] if m in coached_keys)
