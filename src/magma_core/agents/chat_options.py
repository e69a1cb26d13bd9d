"""Options of the OpenAI-compatible agent: what goes into each request, and how long to wait.

One :class:`ChatOptions` holds them all; ``None`` means "not given" (the defaults below apply).
They come from command-line flags (``magma run``/``magma serve-agent``), from a config file
(TOML or JSON, flat keys or under an ``[agent]`` table) or from Python. Given values win over
the file's.

- ``tool_choice``: ``auto`` (default: sent whenever tools are offered; llama.cpp's server
  ignores the tools without it), ``required``, ``none`` or ``omit`` (never sent);
- ``max_tokens``: cap on the reply's length (default 1024: a small model can run away for
  minutes); 0 sends none;
- ``temperature``, ``top_p``, ``seed``: sampling, sent only when given;
- ``timeout`` (seconds per attempt, default 120), ``retries`` (default 2), ``backoff``
  (seconds before the first retry, default 0.5);
- ``extra_body``: more fields for the request body (e.g. ``{"min_p": 0.05}``); they override
  the above, but cannot replace ``model``, ``messages`` or ``tools``;
- ``prompt_style``: ``compact`` (default) or ``raw`` (see :mod:`magma_core.agents.chat_prompt`);
- ``report_role``: ``tool`` (default: environment reports answer the tool calls as ``tool``
  messages) or ``user`` (reports go in a user message, the tool messages only point to it:
  for servers whose chat template drops ``tool`` messages, as llama-cpp-python's
  ``chatml-function-calling`` does);
- ``stage_aware`` (default true): decode for each decision's stage (the engine names it in
  ``extra_keys["stage"]``): only the tools callable there are offered (none in a text-only
  stage that allows none), and an action stage asks for a tool call (``tool_choice``
  ``required``, or the one callable tool by name; ``auto`` on servers that refuse
  ``required``). A ``tool_choice`` given explicitly wins. See
  :mod:`magma_core.agents.stage_decoding`;
- ``constrain``: ``off`` (default: the server's tool calling), ``json_object`` (llama-cpp-python's
  server) or ``json_schema`` (OpenAI, vLLM, llama.cpp's llama-server): the reply is
  constrained by a JSON schema of the stage's tool calls, so names, enums and argument
  lengths are enforced by the server's grammar;
- ``call_prefill``: text the assistant turn starts with in an action stage that offers
  tools (``chatml-tools`` stands for ``<tool_call>\n``, the call marker of MAGMA's tool-aware
  ChatML), sent as a final assistant message that the server continues
  (``continue_final_message``, llama.cpp's ``llama-server`` and vLLM), with ``tool_choice``
  ``required``: the server's own tool-call grammar then holds the reply from its first token
  and the server returns structured tool calls (see :mod:`magma_core.agents.stage_decoding`);
- ``stream`` (default false): stream each reply and stop reading (closing the connection,
  which stops a streaming server) once it holds more than ``max_tokens`` tokens, for
  servers that ignore ``max_tokens``;
- ``output_format``: ``tools`` (default: native tool calls) or ``json`` (the predecessor's
  ``{"say", "action"}`` object in the reply text, for models fine-tuned on its data), and
  ``prompt_template``: a Jinja file rendering the prompt from ``messages``, ``tools``,
  ``permanent_rules``, ``summary`` and ``task_attributes`` (see
  :mod:`magma_core.agents.output_formats`);
- ``summarise_after``: condense the history into ``memory.summary`` once it holds more than
  this many characters (see :mod:`magma_core.agents.summarising`).
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from magma_core.json_types import JSONDict
from magma_core.user_error import UserError

TOOL_CHOICES = ("auto", "required", "none", "omit")
PROMPT_STYLES = ("compact", "raw")
REPORT_ROLES = ("tool", "user")
CONSTRAIN_MODES = ("off", "json_object", "json_schema")
OUTPUT_FORMATS = ("tools", "json")
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_RETRIES = 2
DEFAULT_BACKOFF_S = 0.5
RESERVED_BODY_KEYS = frozenset({"model", "messages", "tools"})
CONFIG_TABLES = ("agent", "judge")


class ChatOptionsError(UserError, ValueError):
    """An option value or config file that cannot be used (one-line message)."""


@dataclass(frozen=True)
class ChatOptions:
    """Request parameters and waiting limits of the OpenAI-compatible agent (see the module
    doc); every field is None when not given."""

    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    timeout: float | None = None
    retries: int | None = None
    backoff: float | None = None
    extra_body: JSONDict = field(default_factory=dict)
    prompt_style: str | None = None
    report_role: str | None = None
    stage_aware: bool | None = None
    constrain: str | None = None
    call_prefill: str | None = None
    stream: bool | None = None
    output_format: str | None = None
    prompt_template: str | None = None
    summarise_after: int | None = None

    def __post_init__(self) -> None:
        for name, check in _CHECKS.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check(name, value))
        if not isinstance(self.extra_body, dict):
            raise ChatOptionsError("extra_body must be a JSON object")
        reserved = sorted(RESERVED_BODY_KEYS & set(self.extra_body))
        if reserved:
            raise ChatOptionsError(f"extra_body cannot set {', '.join(reserved)}")

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def from_mapping(cls, data: object, where: str = "agent options", table: str = "agent") -> ChatOptions:
        """Options from a dict (a config file's content); unknown keys are refused. A file
        may hold an ``[agent]`` and a ``[judge]`` table (``table`` picks one; flat keys are
        the agent's); a file without the ``[judge]`` table gives the judge no options."""
        if isinstance(data, dict) and set(data) <= set(CONFIG_TABLES) and data and all(
                isinstance(v, dict) for v in data.values()):
            data = data.get(table, {})
        elif table != "agent":
            data = {}
        if not isinstance(data, dict):
            raise ChatOptionsError(f"{where}: expected a table of options")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ChatOptionsError(
                f"{where}: unknown option {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        try:
            return cls(**data)
        except ChatOptionsError as exc:
            raise ChatOptionsError(f"{where}: {exc}") from None

    @classmethod
    def from_file(cls, path: str | Path, table: str = "agent") -> ChatOptions:
        """Options from a TOML file (``.toml``) or a JSON file (anything else); ``table``:
        ``agent`` or ``judge`` (see :meth:`from_mapping`)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ChatOptionsError(f"cannot read agent config {path}: {exc.strerror or exc}") from None
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ChatOptionsError(f"agent config {path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
        return cls.from_mapping(data, where=f"agent config {path}", table=table)

    def merged_over(self, base: ChatOptions) -> ChatOptions:
        """These options, with ``base``'s values where these are not given."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in list(values.items()):
            if value is None:
                values[name] = getattr(base, name)
        values["extra_body"] = {**base.extra_body, **self.extra_body}
        return ChatOptions(**values)

    def given(self) -> JSONDict:
        """The options that were given, as plain values (for a run's stored config)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        if not self.extra_body:
            out.pop("extra_body", None)
        return out

    # -- using -----------------------------------------------------------------------------
    def body_params(self, tools_offered: bool) -> JSONDict:
        """The request-body fields these options add (besides model, messages and tools)."""
        params: JSONDict = {}
        choice = self.tool_choice or "auto"
        if tools_offered and choice != "omit":
            params["tool_choice"] = choice
        max_tokens = DEFAULT_MAX_TOKENS if self.max_tokens is None else self.max_tokens
        if max_tokens:
            params["max_tokens"] = max_tokens
        for name in ("temperature", "top_p", "seed"):
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        params.update(self.extra_body)
        return params

    @property
    def stage_aware_on(self) -> bool:
        return self.stage_aware is not False

    @property
    def max_tokens_cap(self) -> int | None:
        """The cap on a reply's tokens (None: no cap)."""
        cap = DEFAULT_MAX_TOKENS if self.max_tokens is None else self.max_tokens
        return cap or None

    @property
    def timeout_s(self) -> float:
        return DEFAULT_TIMEOUT_S if self.timeout is None else self.timeout

    @property
    def retry_count(self) -> int:
        return DEFAULT_RETRIES if self.retries is None else self.retries

    @property
    def backoff_s(self) -> float:
        return DEFAULT_BACKOFF_S if self.backoff is None else self.backoff


def _number(name: str, value: object, low: float, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ChatOptionsError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ChatOptionsError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
    return float(value)


def _integer(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ChatOptionsError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ChatOptionsError(f"{name} must be at least {low}, got {value!r}")
    return value


def _boolean(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ChatOptionsError(f"{name} must be true or false, got {value!r}")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[str, object], str]:
    def check(name: str, value: object) -> str:
        if value not in choices:
            raise ChatOptionsError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ChatOptionsError(f"{name} must be a file name, got {value!r}")
    return value


def _prefill(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ChatOptionsError(f"{name} must be a non-empty text (or chatml-tools), got {value!r}")
    return value


def _positive(name: str, value: object) -> float:
    number = _number(name, value, 0.0)
    if number <= 0:
        raise ChatOptionsError(f"{name} must be more than 0, got {value!r}")
    return number


_CHECKS = {
    "tool_choice": _one_of(TOOL_CHOICES),
    "prompt_style": _one_of(PROMPT_STYLES),
    "report_role": _one_of(REPORT_ROLES),
    "constrain": _one_of(CONSTRAIN_MODES),
    "stage_aware": lambda n, v: _boolean(n, v),
    "stream": lambda n, v: _boolean(n, v),
    "output_format": _one_of(OUTPUT_FORMATS),
    "prompt_template": lambda n, v: _text(n, v),
    "call_prefill": lambda n, v: _prefill(n, v),
    "summarise_after": lambda n, v: _integer(n, v, 1),
    "max_tokens": lambda n, v: _integer(n, v, 0),
    "temperature": lambda n, v: _number(n, v, 0.0, 2.0),
    "top_p": lambda n, v: _number(n, v, 0.0, 1.0),
    "seed": lambda n, v: _integer(n, v, -(2**63)),
    "timeout": _positive,
    "retries": lambda n, v: _integer(n, v, 0),
    "backoff": lambda n, v: _number(n, v, 0.0),
}
