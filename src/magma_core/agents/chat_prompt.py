"""What the OpenAI-compatible agent shows a model: system prompt, tool schemas, reports.

Two prompt styles. ``compact`` (the default) helps small models without hurting large ones:
known names become ``enum`` s in the tool schemas (where a tool parameter declares the task
attribute it draws from, ``values_from``), environment reports are short plain text, and the
system prompt lists the names and says to use only those and to answer the user when done.
``raw`` is the earlier style (JSON reports, no enums, the attributes as JSON), kept to measure
the difference (``benchmarks/real_model.py``).
"""

from __future__ import annotations

import copy
import json
import re

from magma_core.agents.chat_options import PROMPT_STYLES
from magma_core.json_types import JSONDict, JSONValue

__all__ = ["PROMPT_STYLES", "json_schema_for", "plain_report", "system_content", "tool_schemas", "turn_messages"]

RAW_SYSTEM_PROMPT = (
    "You operate robots in a simulated environment by calling tools. Each turn, either call "
    "tools (at most one per robot) or answer the user with a plain message. Reports from the "
    "environment tell you how your tool calls went."
)
COMPACT_SYSTEM_PROMPT = (
    "You operate robots in a simulated world by calling tools. Each turn, either call tools "
    "(at most one per robot) or, when the task is done or the user asked a question, answer "
    "the user with a short plain message and no tool call. Use only the names listed below, "
    "spelled exactly. After each turn the environment reports how your tool calls went."
)
DEFAULT_SYSTEM_PROMPT = COMPACT_SYSTEM_PROMPT

_TYPE_NAMES = {
    "str": "string", "string": "string",
    "int": "integer", "integer": "integer",
    "float": "number", "number": "number",
    "bool": "boolean", "boolean": "boolean",
    "list": "array", "tuple": "array", "sequence": "array", "array": "array",
    "dict": "object", "mapping": "object", "object": "object",
}
_GENERIC = re.compile(r"^(?:typing\.)?(\w+)\[(.*)\]$")


def json_schema_for(type_name: object) -> JSONDict:
    """JSON schema for a Python type name (``str``, ``int``, ``float``, ``bool``, ``list``,
    ``dict``, ``list[float]``, ``Optional[int]``, ``int | None``); ``{}`` when unknown."""
    if not isinstance(type_name, str):
        return {}
    text = type_name.strip()
    parts = [p.strip() for p in text.split("|")]
    if len(parts) > 1:
        kept = [p for p in parts if p.lower() not in ("none", "nonetype")]
        return json_schema_for(kept[0]) if len(kept) == 1 else {}
    match = _GENERIC.match(text)
    if match:
        outer, inner = match.group(1).lower(), match.group(2)
        if outer == "optional":
            return json_schema_for(inner)
        kind = _TYPE_NAMES.get(outer)
        if kind == "array":
            items = {p.strip() for p in inner.split(",") if p.strip() and p.strip() != "..."}
            return {"type": "array", "items": json_schema_for(items.pop())} if len(items) == 1 else {"type": "array"}
        return {"type": kind} if kind else {}
    kind = _TYPE_NAMES.get(text.lower())
    return {"type": kind} if kind else {}


def names_in(value: JSONValue) -> list[str]:
    """The names an attribute holds: a list of strings, or the keys of a dict."""
    if isinstance(value, dict):
        value = list(value)
    if not isinstance(value, list | tuple):
        return []
    return list(dict.fromkeys(v for v in value if isinstance(v, str) and v))


def parameters_schema(
    parameters: JSONValue, attributes: JSONDict | None = None
) -> tuple[JSONDict, JSONDict, list[str]]:
    """``(schema, properties, required)`` from MAGMA parameter descriptions or a JSON schema.

    With ``attributes``, a string parameter declaring ``values_from: ATTRIBUTE`` gets an
    ``enum`` of the names that attribute holds (none when it holds none)."""
    if isinstance(parameters, dict) and parameters.get("type") == "object" and isinstance(parameters.get("properties"), dict):
        schema = copy.deepcopy(parameters)
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return schema, schema["properties"], list(required)
    properties: JSONDict = {}
    required: list[str] = []
    for name, spec in (parameters or {}).items() if isinstance(parameters, dict) else []:
        spec = spec if isinstance(spec, dict) else {"type": spec}
        prop = json_schema_for(spec.get("type"))
        if isinstance(spec.get("description"), str):
            prop["description"] = spec["description"]
        source = spec.get("values_from")
        if attributes is not None and isinstance(source, str) and prop.get("type") == "string":
            names = names_in(attributes.get(source))
            if names:
                prop["enum"] = names
        properties[str(name)] = prop
        if spec.get("required", True) is not False:
            required.append(str(name))
    return {"type": "object", "properties": properties, "required": required}, properties, required


def _wire_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:60] or "tool"
    wire, n = base, 2
    while wire in taken:
        wire, n = f"{base}_{n}", n + 1
    taken.add(wire)
    return wire


def tool_schemas(
    tools: list[JSONDict], robots: list[str], attributes: JSONDict | None = None
) -> tuple[list[JSONDict], dict[str, str], str | None]:
    """Function schemas for ``tools``; returns ``(schemas, wire name -> tool name, robot
    argument name or None)``. The robot argument is added only with several robots; with
    ``attributes``, declared parameters get enums (see :func:`parameters_schema`)."""
    named = [t for t in tools if isinstance(t.get("name"), str) and t["name"]]
    robot_param: str | None = None
    if len(robots) > 1:
        clash = any(isinstance(t.get("parameters"), dict) and "robot" in parameters_schema(t["parameters"])[1] for t in named)
        robot_param = "target_robot_name" if clash else "robot"
    schemas, names, taken = [], {}, set()
    for tool in named:
        schema, properties, required = parameters_schema(tool.get("parameters"), attributes)
        if robot_param:
            properties[robot_param] = {"type": "string", "enum": list(robots), "description": "The robot that executes this call."}
            schema["required"] = [robot_param, *[r for r in required if r != robot_param]]
        wire = _wire_name(tool["name"], taken)
        names[wire] = tool["name"]
        description = tool.get("description") if isinstance(tool.get("description"), str) else ""
        schemas.append({"type": "function", "function": {"name": wire, "description": description, "parameters": schema}})
    return schemas, names, robot_param


def system_content(
    prompt: str, style: str, robots: list[str], robot_param: str | None, attributes: JSONDict
) -> str:
    """The system message's text: the prompt, the robots, the task attributes."""
    lines = [prompt]
    if robots:
        lines.append(f"Robots: {', '.join(robots)}.")
    if robot_param:
        lines.append(f"Every tool call must name the robot that executes it in its '{robot_param}' argument.")
    if style == "raw":
        if attributes:
            lines.append(f"Task attributes: {json.dumps(attributes, sort_keys=True)}")
        return "\n".join(lines)
    for key in sorted(attributes):
        if key == "known_robots":
            continue
        value = attributes[key]
        names = names_in(value)
        shown = ", ".join(names) if names or value in ([], {}) else json.dumps(value, sort_keys=True)
        lines.append(f"{key.replace('_', ' ').capitalize()}: {shown or '(none)'}.")
    return "\n".join(lines)


def plain_report(content: str) -> str:
    """An environment report as short plain text: the engine's status JSON (``infos``,
    ``failure_reason``; the repeated calls are left out) becomes its lines; anything else is
    returned as it is. A report followed by the user's words keeps the words."""
    head, sep, tail = content.partition("\n\n")
    for text, rest in [(content, ""), *([(head, tail)] if sep else [])]:
        try:
            status = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if not isinstance(status, dict) or not ({"infos", "failure_reason"} & set(status)):
            continue
        lines = [str(status["infos"]).strip()] if str(status.get("infos") or "").strip() else []
        if status.get("failure_reason"):
            lines.append(f"Failed: {status['failure_reason']}")
        if status.get("error"):
            lines.append(f"Error: {status['error']}")
        report = "\n".join(lines) or "Done."
        return f"{report}\n\n{rest}" if rest else report
    return content


def turn_messages(
    history: list[JSONDict], kind: str, content: str, style: str = "compact", report_role: str = "tool"
) -> list[JSONDict]:
    """The messages that bring the instruction into the conversation: an environment report
    answers the pending tool calls of the last assistant message as ``tool`` messages (the
    first carries the report, it covers the whole turn); otherwise a user message (prefixed
    ``[environment]`` for a report). With ``report_role="user"`` the report always goes in the
    user message and the tool messages only point to it."""
    if style == "compact":
        content = plain_report(content)
    last = history[-1] if history else {}
    pending = [c.get("id") for c in last.get("tool_calls") or [] if isinstance(c, dict)] if last.get("role") == "assistant" else []
    if pending and kind == "env" and report_role == "user":
        return [*({"role": "tool", "tool_call_id": call_id, "content": "(reported in the next message)"} for call_id in pending),
                {"role": "user", "content": f"[environment] {content}"}]
    if pending and kind == "env":
        return [
            {"role": "tool", "tool_call_id": call_id,
             "content": content if i == 0 else "(reported with the first call of this turn)"}
            for i, call_id in enumerate(pending)
        ]
    out = [{"role": "tool", "tool_call_id": call_id, "content": "(no result was reported)"} for call_id in pending]
    out.append({"role": "user", "content": f"[environment] {content}" if kind == "env" else content})
    return out
