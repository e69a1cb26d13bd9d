"""Counting a real model's tool calls, for ``real_model.py``: what it wrote, what was valid,
what the engine accepted.

Read from the rows of ``magma runs export NAME --what steps`` (one per decision, with the
exact requests and raw replies in ``agent.model_calls`` and the engine's verdict on each call
in ``calls``):

- **written**: the tool calls in the model's replies (native ``tool_calls``, or the JSON text
  of a constrained reply);
- **valid**: written calls that are well formed and fit the schema sent with the request:
  a tool the request offered, arguments that are a JSON object with every required argument,
  no unknown one (where the schema closes them), values of the declared type, within the
  ``enum`` and ``maxLength`` given. This is the model's (and the server's grammar's) share;
- **accepted**: calls the engine executed without a failed-call reason (``failure_flag``
  ``none``). A valid call may still be refused (a tool the stage does not allow, an object
  not yet detected, a place already taken): this is what reached the world.

Both rates are over the written calls, so they read side by side.
"""

from __future__ import annotations

import json
from typing import Any

from magma_core.agents.stage_decoding import constrained_message

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,), "null": (type(None),),
}


def fits(value: Any, schema: Any) -> bool:
    """Whether ``value`` fits ``schema``: the JSON-schema keywords MAGMA's tool and reply
    schemas use (``type``, ``enum``, ``const``, ``properties``, ``required``,
    ``additionalProperties``, ``items``, ``minItems``, ``maxItems``, ``maxLength``, ``anyOf``);
    any other keyword is not checked."""
    if not isinstance(schema, dict):
        return True
    if "anyOf" in schema and not any(fits(value, s) for s in schema["anyOf"]):
        return False
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        if isinstance(value, bool) and kind in ("integer", "number"):
            return False
        whole = kind == "integer" and isinstance(value, float) and value.is_integer()  # 1.0 is an integer
        if not isinstance(value, _TYPES[kind]) and not whole:
            return False
    if isinstance(value, str) and isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
        return False
    if isinstance(value, list):
        if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
            return False
        if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
            return False
        if isinstance(schema.get("items"), dict) and not all(fits(v, schema["items"]) for v in value):
            return False
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        if any(name not in value for name in schema.get("required") or []):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        if not all(fits(v, properties[k]) for k, v in value.items() if k in properties):
            return False
    return True


def offered_tools(request: dict[str, Any]) -> dict[str, Any]:
    """Tool name -> the parameters schema its request sent: the ``tools`` of an ordinary
    request, or the call branches of a constrained request's reply schema."""
    out: dict[str, Any] = {}
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out[function["name"]] = function.get("parameters") or {"type": "object", "properties": {}}
    response_format = request.get("response_format")
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema") \
        if isinstance(response_format, dict) else None

    def branches(node: Any) -> None:
        if not isinstance(node, dict):
            return
        for sub in node.get("anyOf") or []:
            branches(sub)
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        name = (properties.get("name") or {}).get("const") if isinstance(properties.get("name"), dict) else None
        if isinstance(name, str) and "arguments" in properties:
            out[name] = properties["arguments"]
        calls = properties.get("tool_calls")
        if isinstance(calls, dict):
            branches(calls.get("items"))

    branches(schema)
    return out


def reply_calls(exchange: dict[str, Any]) -> list[tuple[Any, Any]] | None:
    """``(name, arguments)`` of each tool call one reply wrote (arguments as written: a JSON
    string, or what a constrained reply held); None when the exchange has no reply."""
    try:
        message = json.loads(exchange.get("output_raw") or "")["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(message, dict):
        return None
    calls = message.get("tool_calls")
    if not calls and isinstance(message.get("content"), str):  # a constrained reply: JSON text
        calls = (constrained_message(message["content"]) or {}).get("tool_calls")
    out = []
    for call in calls or []:
        function = call.get("function") if isinstance(call, dict) else None
        out.append((function.get("name"), function.get("arguments")) if isinstance(function, dict) else (None, None))
    return out


def call_is_valid(name: Any, arguments: Any, offered: dict[str, Any]) -> bool:
    """Whether one written call is well formed and fits the schema its request sent."""
    if not isinstance(name, str) or name not in offered:
        return False
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return False
    return isinstance(arguments, dict) and fits(arguments, offered[name])


def accepted(call: dict[str, Any]) -> bool:
    """Whether the engine executed a call without a failed-call reason."""
    return call.get("ok") is True and str(call.get("failure_flag") or "none").lower() == "none"


def count_calls(row: dict[str, Any]) -> dict[str, int]:
    """One decision's ``written``, ``valid`` and ``accepted`` calls (see the module)."""
    written = valid = 0
    for exchange in (row.get("agent") or {}).get("model_calls") or []:
        calls = reply_calls(exchange)
        if calls is None:
            continue
        offered = offered_tools(exchange.get("request") or {})
        written += len(calls)
        valid += sum(call_is_valid(name, arguments, offered) for name, arguments in calls)
    return {"written": written, "valid": valid,
            "accepted": sum(accepted(c) for c in row.get("calls") or [] if isinstance(c, dict))}


def completion_tokens(row: dict[str, Any]) -> int:
    """The tokens the model generated for one decision (every exchange)."""
    return sum(((c.get("usage") or {}).get("completion_tokens") or 0)
               for c in (row.get("agent") or {}).get("model_calls") or [])


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A run's figures from its step rows: decisions, calls written, valid and accepted, their
    rates over the written calls, seconds waited per decision and the attempts that timed out."""
    decisions = len(rows)
    counts = [count_calls(r) for r in rows]
    written = sum(c["written"] for c in counts)
    valid = sum(c["valid"] for c in counts)
    accepted_calls = sum(c["accepted"] for c in counts)
    waited = sum((r.get("agent") or {}).get("latency_s", 0.0) or 0.0 for r in rows)
    return {
        "decisions": decisions,
        "calls_written": written,
        "calls_valid": valid,
        "calls_accepted": accepted_calls,
        "calls_per_decision": written / decisions if decisions else 0.0,
        "valid_call_rate": valid / written if written else 0.0,
        "accepted_call_rate": accepted_calls / written if written else 0.0,
        "s_per_decision": waited / decisions if decisions else 0.0,
        "timeouts": sum(1 for r in rows for c in (r.get("agent") or {}).get("model_calls") or []
                        for e in c.get("attempt_log") or [] if e.get("outcome") == "timeout"),
    }
