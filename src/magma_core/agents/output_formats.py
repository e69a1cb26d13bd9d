"""Output formats and prompt templates of the ``openai:`` agent beside native tool calls.

``output_format = "json"`` (``--output-format json``): the predecessor's format for models
fine-tuned on its data. No tools are sent; the system message lists them and asks for exactly
one JSON object, ``{"say": "TEXT", "action": {}}`` to speak or
``{"say": "", "action": {"ROBOT": {"name": TOOL, "arguments": {...}}}}`` to act (one call per
robot). Fences, extra text, other keys, an unknown robot or tool are an error candidate quoting
the reply, as the predecessor's parser refuses them. The history keeps the reply as written.

``prompt_template = FILE`` (``--prompt-template FILE``): a Jinja template (sandboxed: it sees
data only) rendering the prompt from ``messages`` (the conversation so far and this turn, as
``{role, content}``), ``tools`` (the function schemas), ``permanent_rules``
(``memory["memory_list"]``), ``summary`` (``memory["summary"]``, else "") and
``task_attributes`` (the task's attributes, robots included), and ``system`` (the system
message the agent would send). A template that uses ``messages``
renders the whole prompt, sent as one user message; one that does not renders the system
message, and the conversation follows it as chat messages.

Without a template the summary (:mod:`magma_core.agents.summarising`) and permanent rules
join the system message. Agent input is never evaluated: it is data in the template.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from magma_core.agents._http import clip
from magma_core.agents.openai_chat import OpenAIChatAgent
from magma_core.agents.reply_parsing import ReplyError, say_text
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentDecision, AgentInput, AgentToolCall
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    import jinja2  # imported on use (its cost deferred), named here for the annotation

SUMMARY_KEY = "summary"
RULES_KEY = "memory_list"
TEMPLATE_VARIABLES = ("messages", "tools", "permanent_rules", "summary", "task_attributes", "system")


def json_format_prompt(schemas: list[JSONDict], robots: list[str], robot_param: str | None) -> str:
    """The system-message part that asks for the ``{say, action}`` object and lists the tools."""
    tools = []
    for schema in schemas:
        function = json.loads(json.dumps(schema["function"]))
        properties = function.get("parameters", {}).get("properties", {})
        if robot_param:
            properties.pop(robot_param, None)
            required = function["parameters"].get("required") or []
            function["parameters"]["required"] = [r for r in required if r != robot_param]
        tools.append(function)
    robot = robots[0] if robots else "ROBOT"
    return (
        "Answer with exactly one JSON object and nothing else (no code fence, no other text):\n"
        '{"say": "your message", "action": {}} to speak, or\n'
        f'{{"say": "", "action": {{"{robot}": {{"name": "TOOL", "arguments": {{...}}}}}}}} to act '
        f"(robots: {', '.join(robots) or 'none'}; one tool call per robot).\n"
        f"Tools: {json.dumps(tools, sort_keys=True)}"
    )


def parse_json_reply(message: JSONDict, names: dict[str, str],
                     robots: list[str]) -> tuple[AgentDecision, JSONDict]:
    """``(decision, assistant message)`` from a reply holding the ``{say, action}`` object;
    :class:`ReplyError` for anything else (see the module)."""
    text = say_text(message)
    try:
        data = json.loads(text, strict=False)
    except ValueError as exc:
        raise ReplyError("invalid_json", f"the reply is not one JSON object ({exc})") from None
    if not isinstance(data, dict) or set(data) != {"say", "action"}:
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ReplyError("invalid_json", f'the reply must be {{"say", "action"}}, got {clip(str(keys), 100)}')
    say, action = data["say"], data["action"]
    if not isinstance(say, str) or not isinstance(action, dict):
        raise ReplyError("invalid_json", '"say" must be a string and "action" an object')
    if action and say:
        raise ReplyError("invalid_json", 'an action comes with an empty "say"')
    calls = []
    for robot, call in action.items():
        if robot not in robots:
            raise ReplyError("unknown_robot", f"unknown robot {clip(str(robot), 100)!r} (robots: {', '.join(robots)})")
        if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
            raise ReplyError("invalid_json", f'the action of {robot} must be {{"name", "arguments"}}')
        name, arguments = call["name"], call["arguments"]
        if not isinstance(name, str) or name not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ReplyError("unknown_tool", f"unknown tool {clip(str(name), 100)!r} (tools: {known})")
        if not isinstance(arguments, dict):
            raise ReplyError("bad_arguments", f"the arguments of {name} must be a JSON object")
        calls.append(AgentToolCall(name=names[name], arguments=arguments, target_robot_name=robot))
    assistant = {"role": "assistant", "content": json.dumps(data, ensure_ascii=False)}
    return AgentDecision(say=say, tool_calls=calls), assistant


def load_template(path: str) -> tuple[jinja2.Template, bool]:
    """The Jinja template at ``path`` (sandboxed), and whether it uses ``messages``; a missing
    or broken file is a one-line :class:`UserError`."""
    import jinja2
    from jinja2 import meta
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read prompt template {path}: {exc.strerror or exc}") from None
    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False)
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False, sort_keys=True)
    try:
        template = env.from_string(source)
        uses = meta.find_undeclared_variables(env.parse(source))
    except jinja2.TemplateError as exc:
        raise UserError(f"prompt template {path} is not a valid Jinja template: {exc}") from None
    unknown = sorted(uses - set(TEMPLATE_VARIABLES))
    if unknown:
        raise UserError(f"prompt template {path} uses {', '.join(unknown)}: it may use "
                        f"{', '.join(TEMPLATE_VARIABLES)}")
    return template, "messages" in uses


class FormattedChatAgent(OpenAIChatAgent):
    """The ``openai:`` agent with its ``output_format`` and ``prompt_template`` options applied
    (see the module); it takes the same arguments as :class:`OpenAIChatAgent`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.json_format = self.options.output_format == "json"
        self.template, self.template_whole = (load_template(self.options.prompt_template)
                                              if self.options.prompt_template else (None, False))

    def prompt_messages(self, system: JSONDict, history: list[JSONDict], turn: list[JSONDict],
                        agent_input: AgentInput, schemas: list[JSONDict]) -> list[JSONDict]:
        memory = agent_input.memory
        robots = [r for r in agent_input.attributes.get("known_robots") or [] if isinstance(r, str)]
        robot_param = self._robot_param(schemas, robots)
        system = dict(system)
        if self.json_format:
            system["content"] += "\n" + json_format_prompt(schemas, robots, robot_param)
        summary = memory.get(SUMMARY_KEY) if isinstance(memory.get(SUMMARY_KEY), str) else ""
        rules = [str(r) for r in memory.get(RULES_KEY) or []] if isinstance(memory.get(RULES_KEY), list) else []
        if self.template is None:
            if rules:
                system["content"] += "\nPermanent rules:\n" + "\n".join(f"- {r}" for r in rules)
            if summary:
                system["content"] += "\nSummary of the conversation so far:\n" + summary
            return [system, *history, *turn]
        conversation = [{"role": m["role"], "content": _text(m)} for m in [*history, *turn]]
        try:
            text = self.template.render(
                messages=conversation, tools=schemas, permanent_rules=rules, summary=summary,
                task_attributes=dict(agent_input.attributes), system=system["content"])
        except Exception as exc:  # a template error names the template, not the agent
            raise ReplyError("template_error", f"the prompt template failed: {type(exc).__name__}: {exc}") from None
        if self.template_whole:
            return [{"role": "user", "content": text}]
        return [{"role": "system", "content": text}, *history, *turn]

    def parse_reply(self, message: JSONDict, names: dict[str, str], robots: list[str],
                    robot_param: str | None) -> tuple[AgentDecision, JSONDict]:
        if self.json_format:
            return parse_json_reply(message, names, robots)
        return super().parse_reply(message, names, robots, robot_param)

    def _params(self, agent_input: AgentInput, schemas: list[JSONDict], stage: JSONDict | None = None,
                constrained: bool = False, may_answer: bool = True, robots: int = 1) -> JSONDict:
        if self.json_format:  # the tools are in the prompt; none go as functions
            return super()._params(agent_input, [], None, False, may_answer, robots)
        return super()._params(agent_input, schemas, stage, constrained, may_answer, robots)

    def _count_tool_use(self, offered: bool, message: JSONDict) -> None:
        if not self.json_format:
            super()._count_tool_use(offered, message)

    @staticmethod
    def _robot_param(schemas: list[JSONDict], robots: list[str]) -> str | None:
        if len(robots) <= 1 or not schemas:
            return None
        properties = schemas[0]["function"].get("parameters", {}).get("properties", {})
        return "target_robot_name" if "target_robot_name" in properties else "robot"


def _text(message: JSONDict) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls = message.get("tool_calls") or []
    if calls:
        shown = ", ".join(f"{c['function']['name']}({c['function'].get('arguments', '')})" for c in calls
                          if isinstance(c, dict) and isinstance(c.get("function"), dict))
        text = f"{text}\n[tool calls] {shown}".strip()
    return text
