"""What maps to what between a MAGMA suite and an Inspect AI task, as plain data.

Nothing here imports Inspect: these functions turn MAGMA's side (suite items, the chat
messages and function schemas the ``openai:`` agent speaks, episode records) into the plain
fields Inspect's classes are built from, and back, so the mapping is tested without the
library (``tests/integrations/test_inspect_mapping.py``).

| MAGMA | Inspect |
| --- | --- |
| suite item (frozen task, condition, track, interventions) | ``Sample`` (id = item id, input = the item's first instruction, metadata = its facts) |
| trial ``k`` of an item (seed ``seed + k``) | epoch ``k + 1`` of its sample (:func:`trial_seed`) |
| a stage's tools (OpenAI function schemas) | ``ToolInfo`` (:func:`tool_info_fields`) |
| the stage's ``tool_choice`` (``required`` on action stages) | Inspect's ``tool_choice`` (:func:`inspect_tool_choice`) |
| the conversation (system, user, assistant with ``tool_calls``, tool) | ``ChatMessage`` s (:func:`conversation`) |
| the model's reply | an OpenAI assistant message handed back to MAGMA (:func:`assistant_message`) |
| the episode's verdict on the report's taxonomy | score ``magma_verdict`` (1 on ``success``), with every stage's result in its metadata |
| stages passed / stages | score ``magma_stages`` |
| stages finished within their target tool calls / stages | score ``magma_budget`` |
| pass^k over trials (τ²-bench) | epoch reducer ``pass_hat_k`` (:func:`pass_hat`) |
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from magma_core.bench.runner import item_facts
from magma_core.bench.stats import pass_hat_k
from magma_core.bench.taxonomy import terminal_status
from magma_core.rl.env import TRUNCATED  # a trial Inspect stopped (a limit, an error): its verdict

#: The JSON-schema keywords Inspect's ``JSONSchema`` keeps; others are dropped by it (and
#: reported by :func:`tool_info_fields`).
SCHEMA_KEYWORDS = frozenset({
    "type", "format", "description", "default", "enum", "items", "properties",
    "additionalProperties", "anyOf", "required", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "examples"})
#: The score's value of a trial whose verdict is ``success``, and of any other.
PASSED, NOT_PASSED = 1.0, 0.0


# -- samples -------------------------------------------------------------------------------
def sample_fields(item: dict[str, Any]) -> dict[str, Any]:
    """The ``Sample`` of a suite item: ``id``, ``input`` (the item's first instruction, as
    its reference trace opens), ``target`` and ``metadata`` (the item's facts, as ``magma
    bench`` keeps them, with its interventions)."""
    events = ((item.get("task") or {}).get("perfect_trace") or {}).get("events") or []
    opening = next((e.get("content") for e in events if e.get("type") == "user"
                    and isinstance(e.get("content"), str)), None)
    metadata = item_facts(item) | {"interventions": list(item.get("interventions") or []),
                                   "suite": item.get("suite")}
    return {"id": item["item_id"], "input": opening or f"MAGMA suite item {item['item_id']}",
            "target": "success", "metadata": metadata}


def trial_seed(seed: int, epoch: int) -> int:
    """The seed of Inspect epoch ``epoch`` (1-based): ``magma bench run``'s trial
    ``epoch - 1``, whose seed is ``seed + epoch - 1``."""
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise ValueError(f"an Inspect epoch is an integer >= 1, got {epoch!r}")
    return seed + epoch - 1


# -- tools ---------------------------------------------------------------------------------
def tool_info_fields(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``(fields, dropped)``: the ``ToolInfo`` fields (name, description, parameters) of one
    OpenAI function schema as MAGMA offers it, and the JSON-schema keywords Inspect would drop
    (as ``path.keyword``; nothing is dropped from MAGMA's own tools). Inspect's openai
    providers then send the schema as MAGMA's ``openai:`` agent does, plus ``"strict": true``
    unless the model is given ``-M strict_tools=false``."""
    function = schema.get("function", schema)
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    dropped: list[str] = []
    _walk(parameters, "parameters", dropped)
    # additionalProperties as MAGMA gives it (None: left out, where Inspect would say false)
    fields = {"name": function["name"], "description": function.get("description") or "",
              "parameters": {"type": "object", "properties": dict(parameters.get("properties") or {}),
                             "required": list(parameters.get("required") or []),
                             "additionalProperties": parameters.get("additionalProperties")}}
    return fields, dropped


def _walk(schema: Any, path: str, dropped: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key not in SCHEMA_KEYWORDS:
            dropped.append(f"{path}.{key}")
        elif key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                _walk(sub, f"{path}.{name}", dropped)
        elif key in ("items", "additionalProperties"):
            _walk(value, f"{path}.{key}", dropped)
        elif key == "anyOf" and isinstance(value, list):
            for i, sub in enumerate(value):
                _walk(sub, f"{path}.anyOf[{i}]", dropped)


# -- messages ------------------------------------------------------------------------------
def conversation(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """MAGMA's chat messages as Inspect's message fields: ``role``, ``content`` (text), an
    assistant's ``tool_calls`` as ``{"id", "function", "arguments"}`` (arguments a dict), a
    tool message's ``tool_call_id`` and the ``function`` it answers."""
    functions: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls.append({"id": str(call.get("id") or f"call_{len(calls)}"),
                              "function": str(function.get("name")),
                              "arguments": _arguments(function.get("arguments"))})
                functions[calls[-1]["id"]] = calls[-1]["function"]
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            out.append({"role": "tool", "content": content, "tool_call_id": call_id,
                        "function": functions.get(call_id)})
        elif role in ("system", "user"):
            out.append({"role": role, "content": content})
        else:
            raise ValueError(f"a MAGMA chat message has role system, user, assistant or tool, got {role!r}")
    return out


def assistant_message(content: str | None, tool_calls: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The OpenAI assistant message MAGMA reads a model's reply from: ``content`` and each
    tool call ``{"id", "function", "arguments", "parse_error"}`` (Inspect's ``ToolCall``). A
    call whose arguments Inspect could not parse carries its parse error as the arguments
    text, which MAGMA refuses as not JSON: the decision fails as it would through ``magma
    bench run --agent openai:...``, quoting the reply."""
    message: dict[str, Any] = {"role": "assistant", "content": content or ""}
    calls = []
    for i, call in enumerate(tool_calls):
        error = call.get("parse_error")
        arguments = error if error else json.dumps(call.get("arguments") or {})
        calls.append({"id": str(call.get("id") or f"call_{i}"), "type": "function",
                      "function": {"name": str(call.get("function")), "arguments": arguments}})
    if calls:
        message["tool_calls"] = calls
    return message


def inspect_tool_choice(choice: Any) -> Any:
    """OpenAI's ``tool_choice`` as Inspect's: ``auto``/``none`` as they are, ``required`` as
    ``any``, a named function as ``{"function": NAME}`` (Inspect's ``ToolFunction``), None
    (no tools) as None."""
    if choice is None or choice in ("auto", "none"):
        return choice
    if choice == "required":
        return "any"
    if isinstance(choice, dict) and isinstance((choice.get("function") or {}).get("name"), str):
        return {"function": choice["function"]["name"]}
    raise ValueError(f"not an OpenAI tool_choice: {choice!r}")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else ""


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# -- verdicts and scores -------------------------------------------------------------------
def episode_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What the Inspect log keeps of a finished episode (its stored record, a dict): the
    verdict on the report's taxonomy (as ``magma bench report`` counts it; ``truncated`` for
    a trial Inspect stopped), the engine's own
    status and reason, each stage's result with its budget, the counters and the seed."""
    stages = [{"index": s.get("index"), "name": s.get("name"), "success": s.get("success"),
               "budget": s.get("state"), "tool_calls": s.get("tool_calls", 0),
               "forgiven_tool_calls": s.get("forgiven_tool_calls", 0),
               "target_tool_calls": s.get("target_tool_calls"), "max_tool_calls": s.get("max_tool_calls"),
               "text_only": bool(s.get("text_only")), "errors": list(s.get("error_descriptions") or [])}
              for s in record.get("stages") or []]
    status = str(record.get("status"))
    summary = {"verdict": TRUNCATED if status == TRUNCATED else terminal_status(status, record),
               "status": record.get("status"), "reason": record.get("reason", ""),
               "stages_passed": int(record.get("stages_passed") or 0),
               "num_stages": int(record.get("num_stages") or len(stages)),
               "stage_states": dict(record.get("stage_states") or {}),
               "tool_calls": int(record.get("tool_calls") or 0),
               "decisions": len(record.get("steps") or []),
               "seed": record.get("seed"), "stages": stages}
    if record.get("episode") is not None:
        summary["episode"] = record["episode"]
    return summary


def verdict_score(summary: dict[str, Any]) -> dict[str, Any]:
    """The ``magma_verdict`` score's fields: 1.0 when the verdict is ``success``, the verdict
    as the answer, the engine's reason as the explanation, every stage's result as metadata."""
    value = PASSED if summary["verdict"] == "success" else NOT_PASSED
    return {"value": value, "answer": summary["verdict"],
            "explanation": f"{summary['status']}: {summary['reason']}",
            "metadata": {k: summary[k] for k in ("status", "stages", "stages_passed", "num_stages",
                                                 "tool_calls", "decisions", "seed")}}


def stages_score(summary: dict[str, Any]) -> dict[str, Any]:
    """The ``magma_stages`` score's fields: the share of stages passed (``magma bench``'s
    progression), each stage's verdict as metadata."""
    total = summary["num_stages"]
    verdicts = {str(s["name"] or s["index"]): s["success"] for s in summary["stages"]}
    return {"value": summary["stages_passed"] / total if total else 0.0,
            "answer": f"{summary['stages_passed']}/{total}",
            "explanation": ", ".join(f"{name}: {v or 'not reached'}" for name, v in verdicts.items()),
            "metadata": {"stages": verdicts}}


def budget_score(summary: dict[str, Any]) -> dict[str, Any]:
    """The ``magma_budget`` score's fields: the share of stages finished within their target
    tool calls (the engine's ``OPTIMAL``), each stage's budget score and tool calls as metadata."""
    total = summary["num_stages"]
    optimal = int(summary["stage_states"].get("OPTIMAL") or 0)
    budgets = [{"name": s["name"], "budget": s["budget"], "tool_calls": s["tool_calls"],
                "target_tool_calls": s["target_tool_calls"], "max_tool_calls": s["max_tool_calls"]}
               for s in summary["stages"]]
    return {"value": optimal / total if total else 0.0, "answer": f"{optimal}/{total} optimal",
            "explanation": ", ".join(f"{b['name']}: {b['budget'] or 'none'} ({b['tool_calls']} calls)"
                                     for b in budgets),
            "metadata": {"stage_states": summary["stage_states"], "budgets": budgets,
                         "tool_calls": summary["tool_calls"]}}


def pass_hat(values: Sequence[float], k: int, threshold: float = PASSED) -> float:
    """τ²-bench's pass^k of one sample from its epochs' values (a value ``>= threshold``
    passed): C(c, k) / C(n, k), the same estimator ``magma bench report`` averages over items
    (NaN when there are fewer than ``k`` epochs)."""
    passed = sum(1 for v in values if v >= threshold)
    value = pass_hat_k([(len(values), passed)], k)
    return float("nan") if value is None else value


def step_event(result_info: dict[str, Any], decision: int) -> dict[str, Any]:
    """What the Inspect transcript shows of one executed decision: the engine's status, the
    stage it leaves the episode on, each call's outcome and a refused reply's error."""
    event = {"decision": decision, "status": result_info.get("status"),
             "stage": f"{int(result_info.get('stage_index') or 0) + 1}/{result_info.get('num_stages')}",
             "calls": [{"tool": c.get("tool"), "ok": c.get("ok"), "message": c.get("message")}
                       for c in result_info.get("calls") or []]}
    if result_info.get("decision_error"):
        event["decision_error"] = result_info["decision_error"]
    return event
