"""Stage-aware decoding: what the OpenAI-compatible agent asks of the server, stage by stage.

The engine tells each input's stage in ``extra_keys["stage"]`` (``kind``: ``action`` or
``text_only``; ``callable_tools``: the tool names the stage lets the agent call, None for
every tool). With the ``stage_aware`` option on (the default), the agent offers only the
tools callable there (none in a text-only stage that allows none: the reply is an answer),
and in an action stage asks for a tool call: the one tool by name when only one is callable,
else ``tool_choice: required`` (a server that refuses ``required``, as llama-cpp-python's
does, gets ``auto`` from then on).

With ``constrain`` (``json_object`` for llama-cpp-python's server, ``json_schema`` for
OpenAI, vLLM and llama.cpp's ``llama-server``) tool calls are not left to the server's tool
calling at all: the tools are described in the system message and the reply is constrained
by a JSON schema of the calls (``{"tool_calls": [{"name": ..., "arguments": {...}}]}``; in a
text-only stage that allows tools, ``{"answer": ...}`` too), so names, enums and required
arguments are enforced by the server's grammar and free strings are bounded
(:data:`MAX_STRING_LENGTH`). The reply is read back into ordinary tool calls: the history and
the exports keep the OpenAI tool-call form.

With ``call_prefill`` (llama.cpp's ``llama-server`` and vLLM, which continue a final assistant
message) an action stage's reply is started with the chat template's call marker
(:func:`call_prefill_text`) and asks for ``tool_choice: required``: the server's tool-call
grammar (the stage's tools, their enums) then holds the reply from its first token, and the
server, not MAGMA, parses the calls.
"""

from __future__ import annotations

import copy
import json

from magma_core.agents.chat_options import CONSTRAIN_MODES
from magma_core.json_types import JSONDict, JSONValue

__all__ = ["CALL_ENDS", "CALL_PREFILLS", "CONSTRAIN_MODES", "call_prefill_text", "callable_tools", "constrained_message",
           "reply_schema", "response_format", "stage_of", "tool_choice", "tools_prompt"]

#: Named call markers for ``call_prefill``: the chat template -> the text its calls start with.
CALL_PREFILLS = {"chatml-tools": "<tool_call>\n", "gemma-tools": "<tool_call>\n"}
#: The text that ends one call of a named marker: the stop sequence of a one-call reply (the
#: server still parses the call; without it a small model repeats calls up to the token cap).
CALL_ENDS = {"chatml-tools": "</tool_call>", "gemma-tools": "</tool_call>"}

#: Longest free string argument a constrained reply may hold (a small model's runaway name).
MAX_STRING_LENGTH = 200
#: Longest answer a constrained reply may hold in a text-only stage that allows tools.
MAX_ANSWER_LENGTH = 2000


def stage_of(extra_keys: JSONDict) -> JSONDict | None:
    """The input's stage (``extra_keys["stage"]``) if it is well formed, else None."""
    stage = extra_keys.get("stage")
    if not isinstance(stage, dict) or stage.get("kind") not in ("action", "text_only"):
        return None
    allowed = stage.get("callable_tools")
    if allowed is not None and not (isinstance(allowed, list) and all(isinstance(n, str) for n in allowed)):
        return None
    return stage


def callable_tools(tools: list[JSONDict], stage: JSONDict | None) -> list[JSONDict]:
    """The tools of ``tools`` the stage lets the agent call (all of them without a stage)."""
    allowed = stage.get("callable_tools") if stage else None
    if allowed is None:
        return tools
    return [t for t in tools if t.get("name") in set(allowed)]


def tool_choice(stage: JSONDict | None, schemas: list[JSONDict], required_ok: bool) -> JSONValue:
    """The ``tool_choice`` for a stage: in an action stage the one tool by name, else
    ``required`` (``auto`` where the server refused it); ``auto`` elsewhere; None without tools."""
    if not schemas:
        return None
    if stage is None or stage["kind"] != "action":
        return "auto"
    if len(schemas) == 1:
        return {"type": "function", "function": {"name": schemas[0]["function"]["name"]}}
    return "required" if required_ok else "auto"


def call_prefill_text(value: str | None, stage: JSONDict | None, schemas: list[JSONDict]) -> str | None:
    """The text an action stage's reply is started with (``value``: a name of
    :data:`CALL_PREFILLS` or the text itself, ``\\n`` read as a newline); None outside an
    action stage that offers tools, or without ``value``."""
    if not value or not schemas or stage is None or stage["kind"] != "action":
        return None
    return CALL_PREFILLS.get(value, value.replace("\\n", "\n"))


def _bounded(schema: JSONValue) -> JSONValue:
    """``schema`` with every free string (no enum, no const) given a ``maxLength``."""
    if isinstance(schema, list):
        return [_bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bounded(v) for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out.setdefault("maxLength", MAX_STRING_LENGTH)
    return out


def reply_schema(schemas: list[JSONDict], max_calls: int, may_answer: bool) -> JSONDict:
    """The JSON schema a constrained reply follows: one to ``max_calls`` calls of the offered
    tools, or (``may_answer``) an answer."""
    calls = []
    for schema in schemas:
        function = schema["function"]
        parameters = _bounded(copy.deepcopy(function.get("parameters") or {"type": "object", "properties": {}}))
        calls.append({"type": "object", "properties": {"name": {"const": function["name"]}, "arguments": parameters},
                      "required": ["name", "arguments"]})
    items = calls[0] if len(calls) == 1 else {"anyOf": calls}
    call_reply = {"type": "object", "properties": {"tool_calls": {
        "type": "array", "items": items, "minItems": 1, "maxItems": max(1, max_calls)}}, "required": ["tool_calls"]}
    if not may_answer:
        return call_reply
    answer = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": MAX_ANSWER_LENGTH}},
              "required": ["answer"]}
    return {"anyOf": [call_reply, answer]}


def response_format(mode: str, schema: JSONDict) -> JSONDict:
    """The ``response_format`` body field of a constrained request in ``mode``."""
    if mode == "json_object":  # llama-cpp-python's server: a schema inside json_object
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "decision", "schema": schema, "strict": False}}


def tools_prompt(schemas: list[JSONDict], may_answer: bool) -> str:
    """The system message's lines describing the tools of a constrained request."""
    lines = ["Reply with JSON only: {\"tool_calls\": [{\"name\": TOOL, \"arguments\": {...}}]}"
             + (", or {\"answer\": TEXT} to answer the user." if may_answer else ".") + " Tools:"]
    for schema in schemas:
        function = schema["function"]
        properties = (function.get("parameters") or {}).get("properties") or {}
        shown = ", ".join(f"{name}: {json.dumps(prop.get('enum')) if prop.get('enum') else prop.get('type', 'any')}"
                          for name, prop in properties.items())
        description = f" - {function['description']}" if function.get("description") else ""
        lines.append(f"- {function['name']}({shown}){description}")
    return "\n".join(lines)


def constrained_message(content: object) -> JSONDict | None:
    """The reply message a constrained reply's text stands for (tool calls, or the answer
    as text); None when the text is not such a JSON object."""
    if not isinstance(content, str):
        return None
    try:
        data = json.loads(content.strip())
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("answer"), str) and "tool_calls" not in data:
        return {"role": "assistant", "content": data["answer"]}
    calls = data.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    wire = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict):
            return None
        arguments = call.get("arguments", {})
        wire.append({"id": f"call_{i}", "type": "function",
                     "function": {"name": call.get("name"), "arguments": json.dumps(arguments)}})
    return {"role": "assistant", "content": None, "tool_calls": wire}
