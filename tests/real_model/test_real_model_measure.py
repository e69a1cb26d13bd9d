"""How ``benchmarks/real_model.py`` counts a model's calls (no model needed): written, valid
(well formed, fitting the schema sent) and accepted (executed by the engine without a
failed-call reason), over a hand-built episode record stored in a real run store and read
back as the rows ``magma runs export NAME --what steps`` writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from magma_core.agents.chat_prompt import tool_schemas
from magma_core.agents.stage_decoding import reply_schema, response_format
from magma_core.export.run_jsonl import step_rows
from magma_core.store import RunStore
from magma_core.store.run_store import EpisodeSummary

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from real_model_measure import count_calls, fits, measure, offered_tools  # noqa: E402


def _benchmark_module():
    """``benchmarks/real_model.py`` (its name is this test package's: loaded from its path)."""
    spec = importlib.util.spec_from_file_location("real_model_benchmark", ROOT / "benchmarks" / "real_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOLS = [
    {"name": "pick", "description": "Pick an object.",
     "parameters": {"object": {"type": "str", "values_from": "objects"}}},
    {"name": "place", "description": "Place it.",
     "parameters": {"area": {"type": "str", "values_from": "areas"}, "speed": {"type": "float", "required": False}}},
]
ATTRIBUTES = {"objects": ["cube"], "areas": ["zone_a", "zone_b"]}
SCHEMAS = tool_schemas(TOOLS, ["panda"], ATTRIBUTES)[0]  # as the agent sends them: enums of known names


def _call(name: str, arguments, call_id: str = "call_0") -> dict:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _exchange(message: dict | None, constrained: bool = False, completion_tokens: int = 9,
              outcomes: tuple[str, ...] = ("ok",)) -> dict:
    request = {"model": "smollm2-135m", "messages": [{"role": "system", "content": "..."}], "max_tokens": 128}
    if constrained:
        request["response_format"] = response_format("json_object", reply_schema(SCHEMAS, 1, False))
    else:
        request["tools"] = SCHEMAS
    raw = "" if message is None else json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    return {"component": "openai_chat", "request": request, "output_raw": raw,
            "usage": {"completion_tokens": completion_tokens},
            "attempt_log": [{"outcome": o, "latency_s": 1.0} for o in outcomes]}


def _engine(tool: str, arguments: dict, ok: bool, flag: str) -> dict:
    return {"robot": "panda", "tool": tool, "arguments": arguments, "ok": ok, "message": "", "failure_flag": flag}


#: (the model's exchanges, the engine's calls, expected written / valid / accepted)
DECISIONS = [
    # a valid pick the engine ran, and a tool the request did not offer (refused)
    ([_exchange({"role": "assistant", "content": None, "tool_calls": [
        _call("pick", {"object": "cube"}), _call("add_area", {"name": "import os"}, "call_1")]})],
     [_engine("pick", {"object": "cube"}, True, "none"), _engine("add_area", {"name": "import os"}, False, "bad_call")],
     (2, 1, 1)),
    # Python code where the schema's enum names the areas: well formed, not valid, refused
    ([_exchange({"role": "assistant", "content": None, "tool_calls": [_call("place", {"area": "print('x')"})]})],
     [_engine("place", {"area": "print('x')"}, False, "bad_call")],
     (1, 0, 0)),
    # arguments that are no JSON: the agent refused the reply, nothing reached the engine
    ([_exchange({"role": "assistant", "content": None, "tool_calls": [_call("place", '{"area": ')]})], [], (1, 0, 0)),
    # a constrained reply (JSON text, the schema in response_format): valid, but the world
    # refused it (the motion planner failed): valid, not accepted
    ([_exchange({"role": "assistant", "content": json.dumps(
        {"tool_calls": [{"name": "place", "arguments": {"area": "zone_b", "speed": 0.5}}]})}, constrained=True)],
     [_engine("place", {"area": "zone_b", "speed": 0.5}, False, "planner_error")],
     (1, 1, 0)),
    # an attempt that timed out (no reply), then a constrained reply the engine ran
    ([_exchange(None, outcomes=("timeout",), completion_tokens=0),
      _exchange({"role": "assistant", "content": '{"tool_calls": [{"name": "pick", "arguments": {"object": "cube"}}]}'},
                constrained=True, completion_tokens=30)],
     [_engine("pick", {"object": "cube"}, True, "none")],
     (1, 1, 1)),
    # a plain answer: no call written
    ([_exchange({"role": "assistant", "content": "The cube is in zone A."})], [], (0, 0, 0)),
]


@pytest.fixture
def rows(tmp_path):
    steps = [{"step_index": i, "stage_index": 0, "inputs": [{"kind": "env", "content": "{}"}],
              "decision": {}, "calls": calls} for i, (_, calls, _) in enumerate(DECISIONS)]
    per_decision = [{"decision": i + 1, "latency_s": 2.0, "model_calls": exchanges}
                    for i, (exchanges, _, _) in enumerate(DECISIONS)]
    record = {"task": "cube.PickPlace", "seed": 0, "status": "failed", "steps": steps,
              "agent": {"per_decision": per_decision}}
    summary = EpisodeSummary(episode=0, seed=0, status="failed", stages_total=1, stages_passed=0, optimal=0,
                             acceptable=0, exceeded=0, tool_calls=4, decisions=len(steps), wall_s=1.0)
    with RunStore(tmp_path / "magma.db") as store:
        store.open_run("real", "cube.PickPlace", {"agent": "openai:smollm2-135m"})
        store.save_episode("real", summary, record)
        return list(step_rows(store, "real"))


def test_each_decision_counts_written_valid_and_accepted_calls(rows):
    assert len(rows) == len(DECISIONS)
    for row, (_, _, (written, valid, accepted)) in zip(rows, DECISIONS, strict=True):
        assert count_calls(row) == {"written": written, "valid": valid, "accepted": accepted}, row["step"]


def test_the_rates_are_over_the_written_calls_side_by_side(rows):
    m = measure(rows)
    assert (m["decisions"], m["calls_written"], m["calls_valid"], m["calls_accepted"]) == (6, 6, 3, 2)
    assert m["valid_call_rate"] == pytest.approx(3 / 6) and m["accepted_call_rate"] == pytest.approx(2 / 6)
    assert m["calls_per_decision"] == pytest.approx(1.0)
    assert m["s_per_decision"] == pytest.approx(2.0) and m["timeouts"] == 1


def test_no_decision_no_division():
    assert measure([])["valid_call_rate"] == 0.0 and measure([])["accepted_call_rate"] == 0.0


def test_the_offered_tools_are_read_from_either_kind_of_request():
    plain = offered_tools({"tools": SCHEMAS})
    constrained = offered_tools({"response_format": response_format("json_schema", reply_schema(SCHEMAS, 2, True))})
    assert set(plain) == set(constrained) == {"pick", "place"}
    assert plain["pick"]["properties"]["object"]["enum"] == ["cube"]
    assert constrained["place"]["properties"]["area"]["enum"] == ["zone_a", "zone_b"]
    assert constrained["place"]["required"] == ["area"]


@pytest.mark.parametrize(("value", "schema", "ok"), [
    ({"n": 1}, {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}, True),
    ({"n": True}, {"type": "object", "properties": {"n": {"type": "integer"}}}, False),  # a bool is no number
    ({"n": 1.5}, {"type": "object", "properties": {"n": {"type": "number"}}}, True),
    ({"n": 2.0}, {"type": "object", "properties": {"n": {"type": "integer"}}}, True),
    ({"n": 2.5}, {"type": "object", "properties": {"n": {"type": "integer"}}}, False),
    ({}, {"type": "object", "required": ["n"]}, False),
    ({"x": 1}, {"type": "object", "properties": {}, "additionalProperties": False}, False),
    ("a" * 201, {"type": "string", "maxLength": 200}, False),
    (["a"], {"type": "array", "items": {"type": "integer"}}, False),
    ("zone_c", {"anyOf": [{"const": "zone_a"}, {"enum": ["zone_b"]}]}, False),
])
def test_fits_checks_the_schema_keywords_the_tools_use(value, schema, ok):
    assert fits(value, schema) is ok


def test_keep_stores_the_runs_in_the_folder_given(tmp_path):
    run_folder = _benchmark_module().run_folder
    kept = tmp_path / "kept"
    with run_folder(str(kept)) as out:
        (out / "magma.db").write_text("x")
    assert (kept / "magma.db").exists()
    with run_folder(None) as out:
        temporary = out
        (out / "magma.db").write_text("x")
    assert not temporary.exists()
