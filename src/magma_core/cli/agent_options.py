"""The model options shared by every command that talks to a model (``magma run``,
``magma bench run``, ``magma gen``, ``magma serve-agent``; the judge reads the config file's
``[judge]`` table) (``--max-tokens``,
``--tool-choice``, ... and ``--agent-config FILE``); see :mod:`magma_core.agents.chat_options`.
Flags win over the config file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from magma_core.agents.chat_options import (
    CONSTRAIN_MODES,
    OUTPUT_FORMATS,
    PROMPT_STYLES,
    REPORT_ROLES,
    TOOL_CHOICES,
    ChatOptions,
    ChatOptionsError,
)
from magma_core.cli import CliError

#: flag -> ChatOptions field
FLAGS = {
    "tool_choice": "tool_choice",
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "model_seed": "seed",
    "model_timeout": "timeout",
    "model_retries": "retries",
    "extra_body": "extra_body",
    "prompt_style": "prompt_style",
    "report_role": "report_role",
    "stage_decoding": "stage_aware",
    "constrain": "constrain",
    "call_prefill": "call_prefill",
    "stream_cap": "stream",
    "output_format": "output_format",
    "prompt_template": "prompt_template",
    "summarise_after": "summarise_after",
}


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None

    return parse


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Add the model options to ``parser`` (all default to "not given")."""
    group = parser.add_argument_group("model options (openai:MODEL agents)")
    group.add_argument("--tool-choice", choices=TOOL_CHOICES, default=None,
                       help="tool_choice sent with the tools (default auto; omit: never sent)")
    group.add_argument("--max-tokens", type=_number(int), default=None,
                       help="cap on each reply's tokens (default 1024; 0: no cap sent)")
    group.add_argument("--temperature", type=_number(float), default=None, help="sampling temperature")
    group.add_argument("--top-p", type=_number(float), default=None, help="nucleus sampling top_p")
    group.add_argument("--model-seed", type=_number(int), default=None, help="sampling seed sent to the model")
    group.add_argument("--model-timeout", type=_number(float), default=None,
                       help="seconds to wait for one reply (default 120)")
    group.add_argument("--model-retries", type=_number(int), default=None,
                       help="attempts after a timeout or server error (default 2)")
    group.add_argument("--extra-body", type=_json_object, default=None,
                       help="more request-body fields, a JSON object, e.g. '{\"min_p\": 0.05}'")
    group.add_argument("--prompt-style", choices=PROMPT_STYLES, default=None,
                       help="compact (default: name enums, plain-text reports) or raw")
    group.add_argument("--report-role", choices=REPORT_ROLES, default=None,
                       help="environment reports as tool messages (default) or user messages "
                       "(for chat templates that drop tool messages)")
    group.add_argument("--stage-decoding", choices=("on", "off"), default=None,
                       help="decode for each stage: only its callable tools, a tool call required "
                       "in action stages (default on)")
    group.add_argument("--constrain", choices=CONSTRAIN_MODES, default=None,
                       help="constrain replies by a JSON schema of the stage's tool calls: "
                       "json_object (llama-cpp-python), json_schema (OpenAI, vLLM, llama-server); "
                       "default off")
    group.add_argument("--call-prefill", default=None, metavar="TEXT",
                       help="start an action stage's reply with this call marker (chatml-tools: "
                       "<tool_call>), continued under the server's tool grammar (llama-server, vLLM)")
    group.add_argument("--stream-cap", choices=("on", "off"), default=None,
                       help="stream replies and stop reading past --max-tokens, for servers "
                       "that ignore it (default off)")
    group.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                       help="tools (default: native tool calls) or json (the predecessor's "
                       "{say, action} reply, for models fine-tuned on its data)")
    group.add_argument("--prompt-template", default=None, metavar="FILE",
                       help="a Jinja prompt template (messages, tools, permanent_rules, summary, "
                       "task_attributes)")
    group.add_argument("--summarise-after", type=_number(int), default=None, metavar="CHARS",
                       help="condense the history into a summary past this many characters")
    group.add_argument("--agent-config", default=None,
                       help="a TOML or JSON file of these options (flags win over it); its "
                       "[judge] table, if any, holds the judge's")


def chat_options_from(args: argparse.Namespace) -> ChatOptions:
    """The options ``args`` give (the config file first, the flags over it); a bad value is a
    one-line ``CliError``."""
    try:
        base = ChatOptions.from_file(args.agent_config) if getattr(args, "agent_config", None) else ChatOptions()
        given = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag, None) is not None}
        given = {k: (v == "on") if k in ("stage_aware", "stream") else v for k, v in given.items()}
        return ChatOptions(**given).merged_over(base)
    except ChatOptionsError as exc:
        raise CliError(str(exc)) from None


def judge_options_from(args: argparse.Namespace) -> dict[str, Any]:
    """The judge's model options: the ``[judge]`` table of ``--agent-config`` (none without
    one); a bad value is a one-line ``CliError``."""
    if not getattr(args, "agent_config", None):
        return {}
    try:
        return ChatOptions.from_file(args.agent_config, table="judge").given()
    except ChatOptionsError as exc:
        raise CliError(str(exc)) from None
