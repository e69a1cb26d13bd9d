"""Rows in the OpenAI chat fine-tuning format, in the vocabulary the agent actually saw.

A conversation is ``{"messages": [...], "tools": [...]}``: a system message (the robots and the
task attributes, as the OpenAI-compatible agent writes it), then per step the input (``user``,
or ``tool`` results answering the previous assistant's calls; with the camera images a run
with ``--observe images`` showed, as ``image_url`` content parts) and the assistant's decision
(``content`` and/or ``tool_calls`` whose ``arguments`` are JSON strings; a masked mistake
carries ``"weight": 0``, see :mod:`.kinds`). Tools are the
function schemas of the tools in the agent input. Tool and attribute orders are shuffled with a
seed per example, as the predecessor's export does.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Collection
from typing import TYPE_CHECKING

from magma_core.agents.base import robot_names
from magma_core.agents.chat_prompt import (
    DEFAULT_SYSTEM_PROMPT,
    RAW_SYSTEM_PROMPT,
    system_content,
    tool_schemas,
    turn_messages,
)
from magma_core.agents.image_parts import with_image_parts
from magma_core.export.rows import Candidate, Situation
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.rows import ExportForest


def shuffled_input(agent_input: JSONDict, seed: int, key: str) -> JSONDict:
    """A copy of ``agent_input`` whose tools, attributes and ``memory.memory_list`` are in an
    order drawn from ``seed`` and ``key``."""
    rng = random.Random(f"{seed}:{key}")
    out = copy.deepcopy(agent_input)
    tools = list(out.get("tools") or [])
    rng.shuffle(tools)
    out["tools"] = tools
    items = list((out.get("attributes") or {}).items())
    rng.shuffle(items)
    out["attributes"] = dict(items)
    memory = out.get("memory") or {}
    if isinstance(memory.get("memory_list"), list):
        rng.shuffle(memory["memory_list"])
    return out


def model_view(forest: ExportForest) -> dict[str, str]:
    """How the source's model saw its conversation: ``prompt_style`` and ``report_role`` from
    the agent options stored with the run or generation (the agent's defaults otherwise)."""
    config = (forest.sources[0].get("config") if forest.sources else None) or {}
    options = config.get("agent_options") if isinstance(config.get("agent_options"), dict) else {}
    style = options.get("prompt_style") if options.get("prompt_style") in ("compact", "raw") else "compact"
    role = options.get("report_role") if options.get("report_role") in ("tool", "user") else "tool"
    return {"prompt_style": style, "report_role": role}


def system_message(agent_input: JSONDict, robots: list[str], robot_param: str | None,
                   prompt_style: str = "compact") -> JSONDict:
    """The system message as :class:`~magma_core.agents.OpenAIChatAgent` writes it."""
    prompt = DEFAULT_SYSTEM_PROMPT if prompt_style == "compact" else RAW_SYSTEM_PROMPT
    attributes = agent_input.get("attributes") or {}
    return {"role": "system", "content": system_content(prompt, prompt_style, robots, robot_param, attributes)}


def assistant_message(
    decision: JSONDict, wire_names: dict[str, str], robot_param: str | None, step: int
) -> JSONDict:
    """The assistant turn of one decision; tool names as the agent saw them."""
    wire_of = {tool: wire for wire, tool in wire_names.items()}
    calls = []
    for i, call in enumerate(decision.get("tool_calls") or []):
        arguments = dict(call.get("arguments") or {})
        if robot_param:
            arguments[robot_param] = call.get("target_robot_name")
        calls.append({
            "id": f"call_{step}_{i}",
            "type": "function",
            "function": {"name": wire_of.get(call["name"], call["name"]),
                         "arguments": json.dumps(arguments, sort_keys=True)},
        })
    message: JSONDict = {"role": "assistant", "content": decision.get("say") or ""}
    if calls:
        message["tool_calls"] = calls
    return message


def conversation(
    steps: list[tuple[Situation, Candidate]], seed: int, key: str, *, last_assistant: bool = True,
    prompt_style: str = "compact", report_role: str = "tool", masked: Collection[int] = (),
) -> tuple[list[JSONDict], list[JSONDict]]:
    """``(messages, tools)`` for a path of steps, as the model received them: the system
    message, the tool schemas (enums included) and the reports in the ``prompt_style`` and
    ``report_role`` the run used (see :func:`model_view`). The system message and the tools
    come from the last step's input (shuffled); with ``last_assistant`` False the last
    decision is left out (a preference prompt). The assistant turn of each step position in
    ``masked`` gets ``"weight": 0`` (OpenAI's fine-tuning key: kept as context, no loss;
    absent means 1)."""
    last_input = shuffled_input(steps[-1][0].agent_input, seed, key)
    attributes = last_input.get("attributes") or {}
    robots = robot_names(attributes)
    tools, wire_names, robot_param = tool_schemas(last_input.get("tools") or [], robots,
                                                  attributes if prompt_style == "compact" else None)
    messages = [system_message(last_input, robots, robot_param, prompt_style)]
    history: list[JSONDict] = []
    for n, (situation, candidate) in enumerate(steps):
        instruction = situation.agent_input.get("instruction") or {}
        turn = turn_messages(history, instruction.get("type", "user"), instruction.get("content", ""),
                             prompt_style, report_role)
        history.extend(with_image_parts(turn, situation.agent_input.get("extra_keys")))
        if n == len(steps) - 1 and not last_assistant:
            break
        message = assistant_message(candidate.decision or {}, wire_names, robot_param, n)
        if n in masked:
            message["weight"] = 0
        history.append(message)
    messages.extend(history)
    return messages, tools


def assistant_for(steps: list[tuple[Situation, Candidate]], candidate: Candidate, seed: int, key: str) -> JSONDict:
    """The assistant message of ``candidate`` in the vocabulary of the path's last input."""
    last_input = shuffled_input(steps[-1][0].agent_input, seed, key)
    robots = robot_names(last_input.get("attributes") or {})
    _, wire_names, robot_param = tool_schemas(last_input.get("tools") or [], robots)
    return assistant_message(candidate.decision or {}, wire_names, robot_param, len(steps) - 1)
