"""The Inspect bridge's mapping, without Inspect (``make test``): samples, seeds, tools,
messages both ways, verdicts, scores and pass^k are plain data built from MAGMA's own."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from magma_core.agents.chat_prompt import tool_schemas
from magma_core.agents.openai_chat import ReplyError, parse_message
from magma_core.bench.stats import pass_hat_k
from magma_core.integrations.inspect import mapping

ITEM = {
    "item_id": "sorting.X-s0.v0.mission_update", "skeleton_id": "sorting.X-s0", "track": "in_domain",
    "condition": "mission_update", "length_bucket": "short", "scenario": "sorting.X", "suite": "tiny",
    "interventions": [{"type": "mission_update", "injected_at_stage": 1, "relevant_at_stage": 1}],
    "metadata": {"control_episode_id": "sorting.X-s0.v0.clean", "number_of_stages": 3,
                 "intervention_lags": [0], "episode_oracle_tool_calls": 4},
    "task": {"perfect_trace": {"events": [
        {"type": "tool_calls", "calls": []}, {"type": "user", "content": "Put the red_cube in zone_b."}]}},
}


def record(status="success", stages=(("FINISH", "OPTIMAL"), ("FINISH", "ACCEPTABLE")), steps=(), reason="done"):
    rows = [{"index": i, "name": f"S{i}", "success": s, "state": b, "tool_calls": 2, "forgiven_tool_calls": 0,
             "target_tool_calls": 2, "max_tool_calls": 4, "text_only": False, "error_descriptions": []}
            for i, (s, b) in enumerate(stages)]
    counts = {"OPTIMAL": 0, "ACCEPTABLE": 0, "UNASSESSED": 0, "EXCEEDED": 0}
    for s, b in stages:
        if b and (s == "FINISH" or b == "EXCEEDED"):
            counts[b] += 1
    return {"status": status, "reason": reason, "seed": 3, "stages": rows, "steps": list(steps),
            "stages_passed": sum(s == "FINISH" for s, _ in stages), "num_stages": len(rows),
            "stage_states": counts, "tool_calls": 2 * len(rows), "episode": 7}


def test_an_item_is_a_sample_opening_with_its_first_instruction():
    fields = mapping.sample_fields(ITEM)
    assert fields["id"] == ITEM["item_id"] and fields["target"] == "success"
    assert fields["input"] == "Put the red_cube in zone_b."
    meta = fields["metadata"]
    assert (meta["condition"], meta["control"], meta["stages"], meta["lags"]) == (
        "mission_update", "sorting.X-s0.v0.clean", 3, [0])
    assert meta["interventions"] == ITEM["interventions"] and meta["suite"] == "tiny"
    json.dumps(fields)  # a sample's fields are JSON, as Inspect logs them
    bare = {**ITEM, "task": {}}
    assert mapping.sample_fields(bare)["input"] == f"MAGMA suite item {ITEM['item_id']}"


def test_epochs_are_trials_with_the_bench_seeds():
    assert [mapping.trial_seed(0, e) for e in (1, 2, 3)] == [0, 1, 2]
    assert mapping.trial_seed(10, 2) == 11
    for bad in (0, -1, True, 1.0):
        with pytest.raises(ValueError, match="epoch"):
            mapping.trial_seed(0, bad)


def test_magmas_tools_map_to_tool_info_fields_and_nothing_is_dropped():
    tools = [{"name": "pick", "description": "Pick an object.",
              "parameters": {"object": {"type": "str", "description": "what", "values_from": "objects"}}},
             {"name": "wait", "description": "Wait.", "parameters": {}}]
    schemas, _, _ = tool_schemas(tools, ["panda"], {"objects": ["red_cube", "blue_cube"]})
    fields, dropped = mapping.tool_info_fields(schemas[0])
    assert dropped == []
    assert fields["name"] == "pick" and fields["description"] == "Pick an object."
    assert fields["parameters"]["required"] == ["object"]
    assert fields["parameters"]["properties"]["object"]["enum"] == ["red_cube", "blue_cube"]
    assert fields["parameters"]["additionalProperties"] is None  # left out, as MAGMA sends it
    assert mapping.tool_info_fields(schemas[1]) == ({"name": "wait", "description": "Wait.", "parameters": {
        "type": "object", "properties": {}, "required": [], "additionalProperties": None}}, [])


def test_schema_keywords_inspect_would_drop_are_named():
    schema = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "$defs": {}, "properties": {
            "xs": {"type": "array", "minItems": 1, "items": {"type": "integer", "const": 3}},
            "u": {"anyOf": [{"type": "string", "title": "T"}]}}}}}
    _, dropped = mapping.tool_info_fields(schema)
    assert dropped == ["parameters.$defs", "parameters.xs.minItems", "parameters.xs.items.const",
                       "parameters.u.anyOf[0].title"]


def test_magmas_conversation_maps_to_inspect_message_fields():
    messages = [
        {"role": "system", "content": "You operate robots."},
        {"role": "user", "content": [{"type": "text", "text": "Put "}, {"type": "text", "text": "it."}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "pick", "arguments": '{"object": "red_cube"}'}},
            {"id": "c2", "type": "function", "function": {"name": "wait", "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "panda: pick succeeded"},
        {"role": "tool", "tool_call_id": "c2", "content": "(reported with the first call of this turn)"},
        {"role": "tool", "tool_call_id": "gone", "content": "?"},
    ]
    out = mapping.conversation(messages)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert out[1]["content"] == "Put it."
    assert out[2] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": "pick", "arguments": {"object": "red_cube"}},
        {"id": "c2", "function": "wait", "arguments": {}}]}
    assert [m["function"] for m in out[3:]] == ["pick", "wait", None]
    with pytest.raises(ValueError, match="role"):
        mapping.conversation([{"role": "developer", "content": "x"}])


def test_a_reply_goes_back_as_the_message_magmas_openai_agent_parses():
    names = {"pick": "pick", "place": "place"}
    message = mapping.assistant_message(None, [{"id": "a", "function": "pick", "arguments": {"object": "red_cube"}}])
    decision, kept = parse_message(message, names, ["panda"], None)
    assert [(c.name, c.arguments, c.target_robot_name) for c in decision.tool_calls] == [
        ("pick", {"object": "red_cube"}, "panda")]
    assert kept["tool_calls"][0]["id"] == "a"
    text = mapping.assistant_message("The cube is in zone_b.")
    assert parse_message(text, names, ["panda"], None)[0].say == "The cube is in zone_b."
    # arguments Inspect could not parse stay refused, as through the openai: agent
    broken = mapping.assistant_message("", [{"id": "b", "function": "pick", "arguments": {},
                                             "parse_error": "Error parsing {object: red"}])
    with pytest.raises(ReplyError) as refused:
        parse_message(broken, names, ["panda"], None)
    assert refused.value.code == "bad_arguments"
    unknown = mapping.assistant_message("", [{"id": "c", "function": "fly", "arguments": {}}])
    with pytest.raises(ReplyError, match="unknown tool"):
        parse_message(unknown, names, ["panda"], None)


def test_a_successful_episode_scores_one_with_its_stages():
    summary = mapping.episode_summary(record())
    assert (summary["verdict"], summary["stages_passed"], summary["num_stages"], summary["episode"]) == (
        "success", 2, 2, 7)
    verdict = mapping.verdict_score(summary)
    assert (verdict["value"], verdict["answer"]) == (1.0, "success")
    assert [s["budget"] for s in verdict["metadata"]["stages"]] == ["OPTIMAL", "ACCEPTABLE"]
    assert mapping.stages_score(summary)["value"] == 1.0
    budget = mapping.budget_score(summary)
    assert (budget["value"], budget["answer"]) == (0.5, "1/2 optimal")
    json.dumps([verdict, budget])


def test_failures_score_zero_on_the_reports_taxonomy():
    failed = mapping.episode_summary(record("failed", (("FINISH", "OPTIMAL"), ("FAILED", None))))
    assert failed["verdict"] == "non_requested_action"
    assert mapping.verdict_score(failed)["value"] == 0.0
    assert mapping.stages_score(failed)["value"] == 0.5
    assert "S1: FAILED" in mapping.stages_score(failed)["explanation"]
    exceeded = mapping.episode_summary(record("exceeded", (("FAILED", "EXCEEDED"),)))
    assert exceeded["verdict"] == "budget_exceeded" and mapping.budget_score(exceeded)["value"] == 0.0
    talked = record("no_action", (("FINISH", "OPTIMAL"), (None, None)), steps=[
        {"stage_index": 1, "decision": {"tool_calls": [], "say": "All done!", "error": None}}] * 3)
    assert mapping.episode_summary(talked)["verdict"] == "textual_hallucination"
    garbled = record("no_action", ((None, None),), steps=[
        {"stage_index": 0, "decision": {"tool_calls": [], "say": "", "error": {"code": "bad_arguments"}}}] * 3)
    assert mapping.episode_summary(garbled)["verdict"] == "invalid_format"
    assert mapping.episode_summary(record("error"))["verdict"] == "env_failure"
    stopped = mapping.episode_summary(record("truncated", (("FINISH", "OPTIMAL"), (None, None))))
    assert stopped["verdict"] == "truncated" and mapping.verdict_score(stopped)["value"] == 0.0


def test_pass_hat_of_a_sample_averages_to_the_reports_pass_k():
    epochs = {"a": [1.0, 0.0, 1.0], "b": [1.0, 1.0, 1.0], "c": [0.0, 0.0, 1.0]}
    for k in (1, 2, 3):
        per_sample = [mapping.pass_hat(v, k) for v in epochs.values()]
        expected = pass_hat_k([(len(v), sum(x >= 1 for x in v)) for v in epochs.values()], k)
        assert sum(per_sample) / len(per_sample) == pytest.approx(expected)
    assert mapping.pass_hat([1.0, 0.0], 1) == 0.5 and mapping.pass_hat([1.0, 0.0], 2) == 0.0
    assert math.isnan(mapping.pass_hat([1.0], 2))


def test_a_step_event_names_the_calls_and_a_refused_reply():
    info = {"status": "ok", "stage_index": 0, "num_stages": 2, "decision_error": None,
            "calls": [{"tool": "pick", "ok": True, "message": "Picked"}]}
    assert mapping.step_event(info, 1) == {"decision": 1, "status": "ok", "stage": "1/2",
                                           "calls": [{"tool": "pick", "ok": True, "message": "Picked"}]}
    refused = mapping.step_event({**info, "calls": [], "decision_error": {"code": "unknown_tool"}}, 2)
    assert refused["decision_error"] == {"code": "unknown_tool"}


def test_the_magma_side_imports_without_inspect_and_names_the_task_file():
    code = ("import sys, magma_core.integrations.inspect.mapping, magma_core.integrations.inspect.episodes; "
            "assert 'inspect_ai' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    shown = subprocess.run([sys.executable, "-m", "magma_core.integrations.inspect"], check=True,
                           capture_output=True, text=True, timeout=120).stdout.strip()
    assert Path(shown).name == "task.py" and Path(shown).is_file()
