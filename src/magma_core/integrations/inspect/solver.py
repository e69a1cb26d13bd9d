"""The solver: a MAGMA episode with Inspect's model as the agent.

For each decision, MAGMA's conversation (system, user, assistant and tool messages, as the
``openai:`` agent would send them) becomes Inspect's messages, the stage's tools become
``ToolInfo`` s and its ``tool_choice`` Inspect's; Inspect's model generates (no tool is run by Inspect: the reply, tool calls
and text, goes back to MAGMA's engine, which executes the decision, verifies the stage and
answers with the next messages). Each executed decision is an ``info`` event of the sample's
transcript (source ``magma``); the episode's summary is kept in the sample's store for the
scorers, and ``state.messages`` ends as MAGMA's conversation.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolChoice, ToolFunction, ToolInfo, ToolParams

from magma_core.integrations.inspect.episodes import SuiteEpisodes
from magma_core.integrations.inspect.mapping import (
    assistant_message,
    conversation,
    inspect_tool_choice,
    tool_info_fields,
)
from magma_core.integrations.inspect.scorers import STORE_KEY

logger = logging.getLogger(__name__)


def chat_messages(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """MAGMA's chat messages as Inspect's (see :func:`~.mapping.conversation`)."""
    out: list[ChatMessage] = []
    for m in conversation(messages):
        if m["role"] == "system":
            out.append(ChatMessageSystem(content=m["content"]))
        elif m["role"] == "user":
            out.append(ChatMessageUser(content=m["content"]))
        elif m["role"] == "assistant":
            calls = [ToolCall(id=c["id"], function=c["function"], arguments=c["arguments"]) for c in m["tool_calls"]]
            out.append(ChatMessageAssistant(content=m["content"], tool_calls=calls or None))
        else:
            out.append(ChatMessageTool(content=m["content"], tool_call_id=m["tool_call_id"], function=m["function"]))
    return out


def tool_infos(schemas: list[dict[str, Any]]) -> list[ToolInfo]:
    """MAGMA's function schemas as Inspect ``ToolInfo`` s (keywords Inspect drops are logged)."""
    infos = []
    for schema in schemas:
        fields, dropped = tool_info_fields(schema)
        if dropped:
            logger.warning("MAGMA tool %s: Inspect drops the schema keywords %s", fields["name"], ", ".join(dropped))
        infos.append(ToolInfo(name=fields["name"], description=fields["description"],
                              parameters=ToolParams(**fields["parameters"])))
    return infos


def tool_choice(choice: Any) -> ToolChoice | None:
    """The stage's OpenAI ``tool_choice`` as Inspect's (see :func:`~.mapping.inspect_tool_choice`)."""
    mapped = inspect_tool_choice(choice)
    return ToolFunction(name=mapped["function"]) if isinstance(mapped, dict) else mapped


def reply_message(message: ChatMessageAssistant) -> dict[str, Any]:
    """The model's reply as the OpenAI assistant message MAGMA reads (see
    :func:`~.mapping.assistant_message`)."""
    calls = [{"id": c.id, "function": c.function, "arguments": c.arguments, "parse_error": c.parse_error}
             for c in message.tool_calls or []]
    return assistant_message(message.text, calls)


@solver
def magma_agent(episodes: SuiteEpisodes) -> Solver:
    """Play the sample's trial (its item, the epoch's seed) with Inspect's model as the agent."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()

        async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]], choice: Any) -> dict[str, Any]:
            state.messages = chat_messages(messages)
            output = await model.generate(state.messages, tools=tool_infos(tools),
                                          tool_choice=tool_choice(choice))
            state.output = output
            return reply_message(output.message)

        def ended(summary: dict[str, Any], messages: list[dict[str, Any]]) -> None:
            state.messages = chat_messages(messages)
            state.store.set(STORE_KEY, summary)

        await episodes.run(str(state.sample_id), state.epoch, ask,
                           on_step=lambda event: transcript().info(event, source="magma"), on_end=ended)
        return state

    return solve
