"""Chat rows rendered through a tokenizer's chat template, checked to keep every tool call.

``export --chat-template SOURCE`` adds a ``text`` field to each chat row: the row's messages
and tools rendered by a Jinja chat template, as a trainer would render them. ``SOURCE`` is
``chatml-tools`` (the tool-aware ChatML template shipped here, ``templates/chatml_tools.jinja``:
``<tool_call>``/``<tool_response>``, ``{% generation %}`` around assistant turns for
assistant-only loss), a tokenizer folder or its ``tokenizer_config.json`` (its
``chat_template``), or a ``.jinja`` file. Many models' own templates drop tool calls or tool
results (the assistant turn renders empty): a row whose text lacks any call's name and
arguments, or any tool result, is refused with the reason, never written half. Others
double-encode the OpenAI format's string arguments (``arguments | tojson``: Qwen2.5's): the
check sees it, and renders such a row with its arguments as objects instead.
The template runs in Jinja's sandbox: a template is data, never code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from jinja2 import TemplateError, nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

from magma_core.json_types import JSONDict, JSONValue
from magma_core.user_error import UserError

if TYPE_CHECKING:  # named for the annotations only
    from jinja2.parser import Parser

SHIPPED = {"chatml-tools": Path(__file__).parent / "templates" / "chatml_tools.jinja",
           "gemma-tools": Path(__file__).parent / "templates" / "gemma_tools.jinja"}


class ChatTemplateError(UserError, ValueError):
    """A chat template that cannot be read or compiled (one line)."""


class _Generation(Extension):
    """``{% generation %}...{% endgeneration %}`` (transformers' assistant-mask markers):
    rendered as their body."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _raise(message: str) -> None:
    raise TemplateError(message)


def template_text(source: str) -> str:
    """The Jinja text ``source`` names (see the module)."""
    if source in SHIPPED:
        return SHIPPED[source].read_text(encoding="utf-8")
    path = Path(source)
    if path.is_dir():
        path = path / "tokenizer_config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ChatTemplateError(f"cannot read chat template {source}: {exc.strerror or exc}") from None
    if path.suffix != ".json":
        return text
    try:
        template = json.loads(text).get("chat_template")
    except (ValueError, AttributeError):
        template = None
    if isinstance(template, list):  # named templates: the default one
        template = next((t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"), None)
    if not isinstance(template, str):
        raise ChatTemplateError(f"{path} holds no chat_template")
    return template


def _tojson(value: JSONValue, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    """``tojson`` as transformers' ``apply_chat_template`` and llama.cpp's server define it:
    keys in their order, nothing HTML-escaped (Jinja's own sorts keys and escapes ``<>&'``), so
    an exported row's text is what the trainer and the server render."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


class ChatTemplate:
    """A compiled chat template; :meth:`render` renders one row, or says why it would not.

    ``objects_used``: how many rows were rendered with their tool-call arguments given as
    objects because the template double-encodes them as strings (see :meth:`render`)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.objects_used = 0
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_Generation])
        env.globals["raise_exception"] = _raise
        env.filters["tojson"] = _tojson
        try:
            self.template = env.from_string(template_text(source))
        except TemplateError as exc:
            raise ChatTemplateError(f"chat template {source} does not compile: {exc}") from None

    def render(self, row: JSONDict) -> tuple[str | None, str | None]:
        """``(text, None)``, or ``(None, reason)`` when the template fails, drops a tool call
        or a tool result of the row, or renders a call's arguments other than as a JSON
        object (e.g. a JSON string inside the JSON: ``"{\\"object\\": ...}"``, what
        ``arguments | tojson`` does to the OpenAI format's string arguments in Qwen2.5's
        template). The check renders a copy whose call names, argument values and results
        are unique markers, and looks for each of them. A row whose string arguments are
        double-encoded is rendered again with its arguments as objects (what such templates
        expect) and kept when that passes (counted in ``objects_used``)."""
        text, reason = self._checked(row)
        if reason is not None and reason.startswith(DOUBLE_ENCODED):
            as_objects = _arguments_as_objects(row)
            if as_objects is not None:
                fixed, again = self._checked(as_objects)
                if again is None:
                    self.objects_used += 1
                    return fixed, None
        return text, reason

    def _checked(self, row: JSONDict) -> tuple[str | None, str | None]:
        probe, wanted = _probe(row)
        try:
            text = self._render(row)
            probed = self._render(probe)
        except (TemplateError, TypeError, ValueError) as exc:
            return None, f"the template fails on this row: {exc}"
        for marker, reason in wanted:
            if marker not in probed:
                return None, reason
            if marker.startswith("magma_probe_arg_") and not _as_json_string(probed, marker):
                return None, f"{DOUBLE_ENCODED} {reason.split(' of tool call ', 1)[1]}"
        return text, None

    def _render(self, row: JSONDict) -> str:
        return self.template.render(messages=row["messages"], tools=row.get("tools") or None,
                                    add_generation_prompt=False, bos_token="", eos_token="")


DOUBLE_ENCODED = "the template renders the arguments other than as a JSON object (double-encoded?): tool call"


def _as_json_string(text: str, marker: str) -> bool:
    """Whether ``marker`` appears in ``text`` as a JSON string value (unescaped quotes
    around it), not inside an escaped string (``\\"marker\\"``) or a Python repr."""
    return any(text[i - 1 : i] == '"' and text[i - 2 : i - 1] != "\\"
               for i in (m.start() for m in re.finditer(re.escape(marker), text)))


def _arguments_as_objects(row: JSONDict) -> JSONDict | None:
    """A copy of ``row`` whose tool-call ``arguments`` JSON strings are objects; None when
    it has none to convert."""
    copy = json.loads(json.dumps(row))
    changed = False
    for message in copy["messages"]:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.loads(function["arguments"])
                except ValueError:
                    return None
                changed = True
    return copy if changed else None


def _probe(row: JSONDict) -> tuple[JSONDict, list[tuple[str, str]]]:
    """A copy of ``row`` with markers for every call name, argument value and tool result,
    and ``(marker, reason if it is missing)`` for each."""
    probe = json.loads(json.dumps(row))
    wanted: list[tuple[str, str]] = []
    for i, message in enumerate(probe["messages"]):
        for j, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            name = function.get("name")
            function["name"] = marker = f"magma_probe_call_{i}_{j}"
            wanted.append((marker, f"the template drops tool call {name!r} of message {i}"))
            arguments = function.get("arguments")
            try:
                data = json.loads(arguments) if isinstance(arguments, str) else arguments
            except ValueError:
                data = None
            if isinstance(data, dict):
                data = {k: f"magma_probe_arg_{i}_{j}_{n}" for n, k in enumerate(data)}
                wanted += [(v, f"the template drops the arguments of tool call {name!r} of message {i}")
                           for v in data.values()]
                function["arguments"] = json.dumps(data) if isinstance(arguments, str) else data
        if message.get("role") == "tool":
            message["content"] = marker = f"magma_probe_result_{i}"
            wanted.append((marker, f"the template drops the tool result of message {i}"))
    return probe, wanted
