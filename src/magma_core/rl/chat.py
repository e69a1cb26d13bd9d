"""A rollout's conversation: what the model is shown and how its replies become decisions.

The same pieces as the ``openai:`` agent (:mod:`magma_core.agents.openai_chat`): the system
message (robots and task attributes, compact style), the tools as function schemas (with the
enums of the names the task holds), the engine's reports as ``tool`` messages answering the
last turn's calls, and :func:`~magma_core.agents.reply_parsing.parse_message` for the reply. So a
model trained here sees exactly what ``magma run --agent openai:MODEL`` would show it.

A reply that cannot become a decision (no JSON arguments, an unknown tool, a missing robot,
not a message at all) becomes a ``DecisionError`` whose message quotes the reply: the engine
records it as the step's failed decision, and the conversation goes on without the bad reply,
as the ``openai:`` agent's memory does.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from magma_core.agents._http import clip
from magma_core.agents.chat_prompt import system_content
from magma_core.agents.openai_chat import DEFAULT_SYSTEM_PROMPT, tool_schemas, turn_messages
from magma_core.agents.reply_parsing import (
    RAW_TEXT_IN_ERRORS,
    ReplyError,
    parse_message,
    raw_text,
    read_history,
)
from magma_core.protocol.agent import AgentInput
from magma_core.simulation.data_structures import Decision, DecisionError
from magma_core.text_safety import safe_value

PROMPT_STYLE = "compact"


@dataclass
class ChatTurn:
    """The tools offered and the messages the model is to answer (one input of the rollout)."""

    messages: list[dict[str, Any]]  # new messages since the model's last reply
    tools: list[dict[str, Any]]  # function schemas, as offered to the model


@dataclass
class ChatSession:
    """The conversation of one rollout: ``messages`` (system message first) is what the model
    has seen and said so far; ``history`` the same without the system message (the ``openai:``
    agent's ``memory["history"]``)."""

    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    _names: dict[str, str] = field(default_factory=dict)
    _robots: list[str] = field(default_factory=list)
    _robot_param: str | None = None

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.messages[1:]

    def open(self, agent_input: AgentInput) -> ChatTurn:
        """Start the conversation at ``agent_input`` (its memory's history, if any, is kept)."""
        robots = [r for r in agent_input.attributes.get("known_robots", []) if isinstance(r, str)]
        self._set_tools(agent_input, robots)
        try:
            history = copy.deepcopy(read_history(agent_input.memory))
        except ValueError:
            history = []
        system = {"role": "system", "content": system_content(
            self.system_prompt, PROMPT_STYLE, robots, self._robot_param, agent_input.attributes)}
        turn = self._turn(history, agent_input)
        self.messages = [system, *history, *turn]
        return ChatTurn(copy.deepcopy(self.messages), copy.deepcopy(self.tools))

    def next_input(self, agent_input: AgentInput) -> ChatTurn:
        """The messages that bring the engine's next input into the conversation."""
        self._set_tools(agent_input, self._robots)
        turn = self._turn(self.history, agent_input)
        self.messages.extend(turn)
        return ChatTurn(copy.deepcopy(turn), copy.deepcopy(self.tools))

    def decide(self, reply: Any) -> Decision | DecisionError:
        """The decision of the model's ``reply`` (an assistant message dict, or its raw text);
        a malformed reply is a ``DecisionError`` and is not kept in the conversation."""
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
        if not isinstance(message, dict):
            return DecisionError("invalid_reply", f"an assistant message is a dict or a string, got "
                                 f"{type(reply).__name__}: {clip(repr(reply), RAW_TEXT_IN_ERRORS)}")
        message = safe_value(message)
        try:
            decision, assistant = parse_message(message, self._names, self._robots, self._robot_param)
        except ReplyError as exc:
            return DecisionError(exc.code, f"{exc.message}. Your reply was: "
                                 f"{clip(raw_text(message), RAW_TEXT_IN_ERRORS)}")
        except (TypeError, ValueError, AttributeError) as exc:
            return DecisionError("invalid_reply", f"{exc}. Your reply was: "
                                 f"{clip(json.dumps(message, default=str), RAW_TEXT_IN_ERRORS)}")
        self.messages.append(assistant)
        return decision.to_decision()

    def absorb(self, decision: Decision) -> None:
        """Add an already-made ``decision`` (e.g. a replayed one) as the model's turn."""
        self.messages.append(self.message_for(decision))

    def message_for(self, decision: Decision) -> dict[str, Any]:
        """The assistant message that makes ``decision`` in this conversation's tool names
        (with several robots, each call names its robot in the robot argument): what a
        scripted policy sends."""
        wire_of = {tool: wire for wire, tool in self._names.items()}
        calls = []
        for i, call in enumerate(decision.tool_calls):
            arguments = dict(call.arguments) if isinstance(call.arguments, dict) else {}
            if self._robot_param:
                arguments[self._robot_param] = call.target_robot_name
            calls.append({"id": f"call_{len(self.messages)}_{i}", "type": "function",
                          "function": {"name": wire_of.get(call.name, call.name),
                                       "arguments": json.dumps(arguments)}})
        message: dict[str, Any] = {"role": "assistant", "content": decision.say}
        if calls:
            message["tool_calls"] = calls
        return message

    def _set_tools(self, agent_input: AgentInput, robots: list[str]) -> None:
        self._robots = list(robots)
        self.tools, self._names, self._robot_param = tool_schemas(
            agent_input.tools, self._robots, agent_input.attributes)

    @staticmethod
    def _turn(history: list[dict[str, Any]], agent_input: AgentInput) -> list[dict[str, Any]]:
        instruction = agent_input.instruction
        return turn_messages(history, instruction.type, instruction.content, PROMPT_STYLE)

