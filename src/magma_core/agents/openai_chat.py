"""An agent backed by any OpenAI-compatible chat-completions endpoint with tool calling.

Per candidate, one chat completion: a system prompt (robots and task attributes), the
conversation kept in ``memory["history"]`` (OpenAI chat messages), and the current instruction.
The engine's tools become function schemas. The reply becomes a decision: each tool call with
its robot, the message text as ``say``.

Robots: with one robot in ``attributes["known_robots"]`` every call targets it. With several,
every function gets a required ``robot`` argument (an enum of the robot names) that is removed
from the arguments and becomes ``target_robot_name``; if a tool already has a parameter named
``robot``, the added argument is called ``target_robot_name`` instead, for every tool.

Environment reports (instruction type ``env``) answer the previous turn's tool calls as
``tool`` messages (the first call's message carries the report, it covers the whole turn);
without pending calls they become a user message prefixed ``[environment]``.

Malformed replies (not a chat completion, bad JSON arguments, an unknown tool, no valid robot
where several exist) become error candidates, with the raw reply kept in ``internal_steps``;
invalid candidates do not change the memory. Each internal step records ``usage`` (token
counts from the reply) and ``latency_s``.

:meth:`OpenAIChatAgent.check` probes ``GET {base_url}/models`` once, so an unreachable
endpoint or a refused API key fails before a run starts (see its doc for what is accepted).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from magma_core.agents._http import clip
from magma_core.agents.base import AgentCheckError, Candidate, CandidateAgent, robot_names
from magma_core.agents.chat_client import DEFAULT_BASE_URL, ChatClient, ChatError
from magma_core.protocol.agent import AgentDecision, AgentInfo, AgentInput, AgentToolCall

CHECK_TIMEOUT_S = 10.0

DEFAULT_SYSTEM_PROMPT = (
    "You operate robots in a simulated environment by calling tools. Each turn, either call "
    "tools (at most one per robot) or answer the user with a plain message. Reports from the "
    "environment tell you how your tool calls went."
)
HISTORY_KEY = "history"
ROLES = ("system", "user", "assistant", "tool")

_TYPE_NAMES = {
    "str": "string", "string": "string",
    "int": "integer", "integer": "integer",
    "float": "number", "number": "number",
    "bool": "boolean", "boolean": "boolean",
    "list": "array", "tuple": "array", "sequence": "array", "array": "array",
    "dict": "object", "mapping": "object", "object": "object",
}
_GENERIC = re.compile(r"^(?:typing\.)?(\w+)\[(.*)\]$")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class ReplyError(ValueError):
    """A reply that cannot become a decision; ``code`` names the kind of fault."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def json_schema_for(type_name: Any) -> dict[str, Any]:
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


def _parameters_schema(parameters: Any) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(schema, properties, required)`` from MAGMA parameter descriptions or a JSON schema."""
    if isinstance(parameters, dict) and parameters.get("type") == "object" and isinstance(parameters.get("properties"), dict):
        schema = copy.deepcopy(parameters)
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return schema, schema["properties"], list(required)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in (parameters or {}).items() if isinstance(parameters, dict) else []:
        spec = spec if isinstance(spec, dict) else {"type": spec}
        prop = json_schema_for(spec.get("type"))
        if isinstance(spec.get("description"), str):
            prop["description"] = spec["description"]
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
    tools: list[dict[str, Any]], robots: list[str]
) -> tuple[list[dict[str, Any]], dict[str, str], str | None]:
    """Function schemas for ``tools``; returns ``(schemas, wire name -> tool name, robot
    argument name or None)``. The robot argument is added only with several robots."""
    named = [t for t in tools if isinstance(t.get("name"), str) and t["name"]]
    robot_param: str | None = None
    if len(robots) > 1:
        clash = any(isinstance(t.get("parameters"), dict) and "robot" in _parameters_schema(t["parameters"])[1] for t in named)
        robot_param = "target_robot_name" if clash else "robot"
    schemas, names, taken = [], {}, set()
    for tool in named:
        schema, properties, required = _parameters_schema(tool.get("parameters"))
        if robot_param:
            properties[robot_param] = {"type": "string", "enum": list(robots), "description": "The robot that executes this call."}
            schema["required"] = [robot_param, *[r for r in required if r != robot_param]]
        wire = _wire_name(tool["name"], taken)
        names[wire] = tool["name"]
        description = tool.get("description") if isinstance(tool.get("description"), str) else ""
        schemas.append({"type": "function", "function": {"name": wire, "description": description, "parameters": schema}})
    return schemas, names, robot_param


def read_history(memory: dict[str, Any]) -> list[dict[str, Any]]:
    """``memory["history"]`` checked to be a list of chat messages; raise ``ValueError``."""
    history = memory.get(HISTORY_KEY, [])
    if not isinstance(history, list):
        raise ValueError(f"memory[{HISTORY_KEY!r}] must be a list of chat messages")
    for i, message in enumerate(history):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ValueError(f"memory[{HISTORY_KEY!r}][{i}] is not a chat message with a role in {ROLES}")
    return history


def turn_messages(history: list[dict[str, Any]], kind: str, content: str) -> list[dict[str, Any]]:
    """The messages that bring the instruction into the conversation (see the module doc)."""
    last = history[-1] if history else {}
    pending = [c.get("id") for c in last.get("tool_calls") or [] if isinstance(c, dict)] if last.get("role") == "assistant" else []
    if pending and kind == "env":
        return [
            {"role": "tool", "tool_call_id": call_id,
             "content": content if i == 0 else "(reported with the first call of this turn)"}
            for i, call_id in enumerate(pending)
        ]
    out = [{"role": "tool", "tool_call_id": call_id, "content": "(no result was reported)"} for call_id in pending]
    out.append({"role": "user", "content": f"[environment] {content}" if kind == "env" else content})
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _say(message: dict[str, Any]) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        raise ReplyError("invalid_reply", f"message content is a {type(content).__name__}, not text")
    return _THINK.sub("", content).strip()


def parse_message(
    message: dict[str, Any], names: dict[str, str], robots: list[str], robot_param: str | None
) -> tuple[AgentDecision, dict[str, Any]]:
    """``(decision, assistant message for the history)`` from a reply message; raise
    :class:`ReplyError` for anything malformed."""
    say = _say(message)
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ReplyError("invalid_reply", "tool_calls is not a list")
    calls: list[AgentToolCall] = []
    wire_calls: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ReplyError("invalid_reply", f"tool call {i} has no function name")
        wire = function["name"]
        if wire not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ReplyError("unknown_tool", f"tool call {i} names unknown tool {clip(wire, 100)!r} (tools: {known})")
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments, parse_constant=_no_constants) if arguments.strip() else {}
            except ValueError as exc:
                raise ReplyError("bad_arguments", f"tool call {i} ({wire}): arguments are not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise ReplyError("bad_arguments", f"tool call {i} ({wire}): arguments must be a JSON object")
        sent = dict(arguments)
        robot = _robot(arguments, robots, robot_param, i, wire)
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else f"call_{i}"
        calls.append(AgentToolCall(name=names[wire], arguments=arguments, target_robot_name=robot))
        wire_calls.append({"id": call_id, "type": "function", "function": {"name": wire, "arguments": json.dumps(sent)}})
    assistant: dict[str, Any] = {"role": "assistant", "content": say}
    if wire_calls:
        assistant["tool_calls"] = wire_calls
    return AgentDecision(say=say, tool_calls=calls), assistant


def _robot(arguments: dict[str, Any], robots: list[str], robot_param: str | None, i: int, wire: str) -> str:
    if robot_param is None:
        if not robots:
            raise ReplyError("missing_robot", f"tool call {i} ({wire}): no robot is named in attributes['known_robots']")
        return robots[0]
    robot = arguments.pop(robot_param, None)
    if robot is None:
        raise ReplyError("missing_robot", f"tool call {i} ({wire}): argument {robot_param!r} is required with several robots ({', '.join(robots)})")
    if robot not in robots:
        raise ReplyError("unknown_robot", f"tool call {i} ({wire}): unknown robot {clip(str(robot), 100)!r} (robots: {', '.join(robots)})")
    return robot


def _model_listed(model: str, listed: list[str]) -> bool:
    """Whether ``model`` is in ``listed``; ``name`` also matches ``name:latest`` (Ollama)."""
    return model in listed or f"{model}:latest" in listed or model.removesuffix(":latest") in listed


class OpenAIChatAgent(CandidateAgent):
    """An agent calling ``model`` at an OpenAI-compatible ``base_url`` (e.g.
    ``http://localhost:8000/v1``); the API key, if any, is read from ``api_key_env``.

    ``temperature`` applies unless ``extra_keys["inference_mode"]`` is true (then 0);
    ``concurrency`` candidates are requested at a time. ``timeout``/``retries``/``backoff``
    bound each call (see :class:`~magma_core.agents.chat_client.ChatClient`).
    """

    agent_id = "magma.openai_chat"
    component = "openai_chat"
    concurrent = True  # one thread-safe HTTP client; requests in flight are independent
    unreachable_codes = frozenset({"timeout", "transport_error"})  # retried by the caller

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        model: str = "gpt-4o-mini",
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 0.5,
        concurrency: int = 4,
        record_prompt: bool = True,
        transport: Any = None,
    ) -> None:
        self.client = ChatClient(base_url, model, api_key_env=api_key_env, timeout=timeout,
                                 retries=retries, backoff=backoff, transport=transport)
        self.model = model
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self.record_prompt = record_prompt
        self.check_warning: str | None = None

    def check(self, timeout: float = CHECK_TIMEOUT_S) -> AgentInfo:
        """Probe ``GET {base_url}/models`` once (no retries, at most ``timeout`` seconds).

        Raise :class:`AgentCheckError` when the endpoint is unreachable (connection error,
        timeout) or refuses the API key (HTTP 401/403). Anything else is accepted: servers
        without ``/models`` (404, 405, a body that is no model list), and a model list that
        does not name ``model`` (servers alias names); the latter, and any other HTTP status,
        leave a note in :attr:`check_warning` (None when all is well).
        """
        client = self.client
        self.check_warning = None
        try:
            listing = client.list_models(timeout)
        except ChatError as exc:
            raise AgentCheckError(f"the model server at {client.base_url} is unreachable: {exc.message}") from None
        where = f"the model server at {client.base_url}"
        if listing.status in (401, 403):
            env = client.api_key_env
            if client.has_api_key:
                advice = f"the API key in ${env} was refused"
            elif env:
                advice = f"no API key was sent: ${env} is not set"
            else:
                advice = "no API key was sent (no api_key_env is configured)"
            raise AgentCheckError(
                f"{where} answered HTTP {listing.status} to GET /models: {advice} ({clip(listing.raw, 200)})"
            )
        if listing.status in (404, 405):
            return self.info()
        if listing.status != 200:
            self.check_warning = f"{where} answered HTTP {listing.status} to GET /models: {clip(listing.raw, 200)}"
        elif listing.models is not None and not _model_listed(self.model, listing.models):
            shown = ", ".join(listing.models[:10]) + (", ..." if len(listing.models) > 10 else "")
            self.check_warning = (
                f"model {self.model!r} is not among the models {where} lists ({shown or 'none'}); "
                "continuing, as servers may alias names"
            )
        return self.info()

    def system_message(self, agent_input: AgentInput, robots: list[str], robot_param: str | None) -> dict[str, Any]:
        """The system message: the prompt, the robots, the task attributes."""
        lines = [self.system_prompt]
        if robots:
            lines.append(f"Robots: {', '.join(robots)}.")
        if robot_param:
            lines.append(f"Every tool call must name the robot that executes it in its '{robot_param}' argument.")
        if agent_input.attributes:
            lines.append(f"Task attributes: {json.dumps(agent_input.attributes, sort_keys=True)}")
        return {"role": "system", "content": "\n".join(lines)}

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        memory = agent_input.memory
        try:
            history = read_history(memory)
        except ValueError as exc:
            return self._fail("invalid_memory", str(exc), memory, [])
        robots = robot_names(agent_input.attributes)
        schemas, names, robot_param = tool_schemas(agent_input.tools, robots)
        instruction = agent_input.instruction
        turn = turn_messages(history, instruction.type, instruction.content)
        messages = [self.system_message(agent_input, robots, robot_param), *history, *turn]
        step: dict[str, Any] = {
            "id": f"{request_id}:{agent_input.id}:{candidate_index}",
            "component": self.component,
            "origin": "model",
            "input_elements": {"model": self.model, "tools": sorted(names.values())},
        }
        if self.record_prompt:
            step["full_prompt"] = json.dumps(messages)
        try:
            reply = self.client.complete(messages, **self._params(agent_input, schemas))
        except ChatError as exc:
            step.update(output_raw=clip(exc.raw), latency_s=exc.latency_s, attempts=exc.attempts, usage={})
            return self._fail(exc.code, exc.message, memory, [step])
        step.update(output_raw=clip(reply.raw), usage=reply.usage, latency_s=reply.latency_s, attempts=reply.attempts)
        try:
            decision, assistant = parse_message(reply.message, names, robots, robot_param)
        except ReplyError as exc:
            return self._fail(exc.code, exc.message, memory, [step])
        new_memory = copy.deepcopy(memory)
        new_memory[HISTORY_KEY] = [*copy.deepcopy(history), *turn, assistant]
        return Candidate(memory=new_memory, decision=decision, internal_steps=[step])

    def _params(self, agent_input: AgentInput, schemas: list[dict[str, Any]]) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if schemas:
            params["tools"] = schemas
        temperature = 0.0 if agent_input.extra_keys.get("inference_mode") is True else self.temperature
        if temperature is not None:
            params["temperature"] = temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return params

    def _fail(self, code: str, message: str, memory: dict[str, Any], steps: list[dict[str, Any]]) -> Candidate:
        return Candidate.fail(code, message, copy.deepcopy(memory), steps, self.component)

    def close(self) -> None:
        self.client.close()
