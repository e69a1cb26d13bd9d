"""From a chat-completions reply message to a MAGMA decision: what every OpenAI-format client
of MAGMA reads the same way (the HTTP agent :mod:`~magma_core.agents.openai_chat`, its output
formats and summarising variant, and the ``rl`` environment's chat seam).

- :func:`parse_message`: the reply's text becomes ``say``, each tool call a call with its
  robot (the added ``robot`` argument when there are several, else the only robot); arguments
  sent as a JSON string are decoded, never evaluated (``NaN``/``Infinity`` refused); anything
  malformed raises :class:`ReplyError` whose ``code`` names the fault (``invalid_reply``,
  ``unknown_tool``, ``bad_arguments``, ``missing_robot``, ``unknown_robot``).
- :func:`say_text`: the text without ``<think>`` blocks, HTML entities decoded.
- :func:`raw_text`: the reply as the model wrote it, for error messages that quote it
  (clipped to :data:`RAW_TEXT_IN_ERRORS` characters by the caller).
- :func:`read_history`: ``memory["history"]`` checked to be a list of chat messages.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from magma_core.agents._http import clip
from magma_core.protocol.agent import AgentDecision, AgentToolCall

__all__ = ["HISTORY_KEY", "RAW_TEXT_IN_ERRORS", "ROLES", "ReplyError", "parse_message", "raw_text",
           "read_history", "say_text"]

#: the key of an agent's memory that holds the conversation (OpenAI chat messages)
HISTORY_KEY = "history"
ROLES = ("system", "user", "assistant", "tool")
#: characters of a model's raw reply quoted in the error message of a malformed reply
RAW_TEXT_IN_ERRORS = 600

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class ReplyError(ValueError):
    """A reply that cannot become a decision; ``code`` names the kind of fault."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def read_history(memory: dict[str, Any]) -> list[dict[str, Any]]:
    """``memory["history"]`` checked to be a list of chat messages; raise ``ValueError``."""
    history = memory.get(HISTORY_KEY, [])
    if not isinstance(history, list):
        raise ValueError(f"memory[{HISTORY_KEY!r}] must be a list of chat messages")
    for i, message in enumerate(history):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ValueError(f"memory[{HISTORY_KEY!r}][{i}] is not a chat message with a role in {ROLES}")
    return history


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def say_text(message: dict[str, Any]) -> str:
    """The reply's text, without ``<think>`` blocks and with HTML entities decoded (servers
    whose chat template HTML-escapes the prompt get models that answer in kind)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        raise ReplyError("invalid_reply", f"message content is a {type(content).__name__}, not text")
    return html.unescape(_THINK.sub("", content)).strip()


def parse_message(
    message: dict[str, Any], names: dict[str, str], robots: list[str], robot_param: str | None
) -> tuple[AgentDecision, dict[str, Any]]:
    """``(decision, assistant message for the history)`` from a reply message; raise
    :class:`ReplyError` for anything malformed."""
    say = say_text(message)
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
                arguments = json.loads(arguments, parse_constant=_no_constants, strict=False) if arguments.strip() else {}
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




def raw_text(message: dict[str, Any]) -> str:
    """The model's reply as it wrote it: its text, then each tool call as ``name(arguments)``."""
    parts = []
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        parts.append(content.strip())
    for call in message.get("tool_calls") or [] if isinstance(message.get("tool_calls"), list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            arguments = function.get("arguments")
            shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
            parts.append(f"{function.get('name')}({shown})")
        else:
            parts.append(json.dumps(call, default=str))
    return " ".join(parts) or json.dumps(message, default=str)
