"""``RuntimeRandomizer``: applies one ``RandomizationSpec`` in both directions, with no chance.

Towards the agent (canonical -> public): tool schema, calls, attributes (translated and
reordered), free text (instructions, status messages, memory). Towards the engine (public ->
canonical): calls and the agent's text. A call whose argument uses a hidden canonical value
is refused with a public reason ("`red_cube` was not detected."), so the agent never
learns the hidden names. Text translation matches whole names only: letters, digits and
``_`` all belong to a name, so ``red_cube`` never matches inside ``red_cube_2``.
"""

from __future__ import annotations

import copy
import re

from magma_core.json_types import JSONDict, JSONValue
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.randomizer.spec import RandomizationSpec
from magma_core.simulation.tasks.perfect_trace import (
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    TraceEvent,
    UserEvent,
)

ROBOTS = "known_robots"
FEEDBACK_LINE = re.compile(r"^(?P<robot>[^:\n]+): (?P<tool>\S+) (?P<verb>succeed|failed) with message: ")


#: a call as the engine labels running skills: ``tool(key=value, ...)``
CALL_LABEL = re.compile(r"(?<![A-Za-z0-9_])(?P<tool>[A-Za-z_][A-Za-z0-9_]*)\((?P<args>[^()]*)\)")
LABEL_KEY = re.compile(r"(?:^|(?<=, ))(?P<key>[A-Za-z_][A-Za-z0-9_]*)=")


class CanonicalNameError(ValueError):
    """A call the public names refuses; ``str(exc)`` is the public reason."""


def _pattern(keys: list[str]) -> re.Pattern | None:
    if not keys:
        return None
    alternatives = "|".join(re.escape(k) for k in sorted(keys, key=lambda k: (-len(k), k)))
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])")


class RuntimeRandomizer:
    """Translation between the public and canonical vocabularies of one spec."""

    def __init__(self, spec: RandomizationSpec | None = None) -> None:
        self.spec = spec or RandomizationSpec()
        self._public_tools: dict[str, tuple[str, dict[str, str]]] = {}
        self._real_tools: dict[str, tuple[str, dict[str, str]]] = {}
        for public, entry in self.spec.tool_equivalence.items():
            params = dict(entry["parameters"])
            self._public_tools[public] = (entry["name"], params)
            self._real_tools[entry["name"]] = (public, {r: p for p, r in params.items()})
        changed = {c: p for c, p in self.spec.attributes_equivalence.items() if c != p}
        self._to_public = changed
        self._to_canonical = {p: c for c, p in changed.items()}
        self._hidden = set(changed) - set(self._to_canonical)
        self._public_re = _pattern(list(self._to_public))
        self._canonical_re = _pattern(list(self._to_canonical))
        tool_names = {r: p for r, (p, _) in self._real_tools.items() if r != p}
        self._tool_re = _pattern(list(tool_names))
        self._tool_names = tool_names

    # -- tools and calls --------------------------------------------------------------------
    def get_tools(self, canonical_tools: list[JSONDict] | None = None) -> list[JSONDict]:
        """The public tool schema (``canonical_tools`` is returned as is under an empty spec)."""
        if not self.spec.tools and canonical_tools is not None:
            return copy.deepcopy(canonical_tools)
        return copy.deepcopy(self.spec.tools)

    def get_real_tool_name(self, public: str) -> str:
        return self._public_tools[public][0] if public in self._public_tools else public

    def to_canonical_call(self, name: object, arguments: object) -> tuple[str, JSONDict]:
        """The canonical ``(tool, arguments)`` of a public call; ``CanonicalNameError`` with
        the public reason when the call names an unknown tool or argument or a hidden name."""
        if not self.spec.tool_equivalence:
            real, params = name, {}
        elif name in self._public_tools:
            real, params = self._public_tools[name]
        else:
            raise CanonicalNameError(f"`{name}` is not a known tool.")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise CanonicalNameError(
                f"Arguments for `{name}` must be a dict, got {type(arguments).__name__}."
            )
        if params:
            unknown = [a for a in arguments if a not in params]
            if unknown:
                raise CanonicalNameError(f"`{', '.join(map(str, unknown))}` are not valid arguments")
        hidden = sorted(self._hidden_in(arguments))
        if hidden:
            verb = "was" if len(hidden) == 1 else "were"
            raise CanonicalNameError(f"`{', '.join(hidden)}` {verb} not detected.")
        return real, {params.get(a, a): self._values(v, self._to_canonical) for a, v in arguments.items()}

    def to_public_call(self, real: str, arguments: JSONDict) -> tuple[str, JSONDict]:
        """The public ``(tool, arguments)`` of a canonical call."""
        public, params = self._real_tools.get(real, (real, {}))
        args = arguments if isinstance(arguments, dict) else {}
        return public, {params.get(a, a): self._values(v, self._to_public) for a, v in args.items()}

    def _hidden_in(self, value: object) -> set[str]:
        if isinstance(value, str):
            return {value} if value in self._hidden else set()
        if isinstance(value, dict):
            return set().union(*(self._hidden_in(k) | self._hidden_in(v) for k, v in value.items()))
        if isinstance(value, (list, tuple)):
            return set().union(*(self._hidden_in(v) for v in value))
        return set()

    def _values(self, value: JSONValue, table: dict[str, str]) -> JSONValue:
        """``value`` with attribute values translated by ``table`` (recursively, keys too):
        whole names inside strings as well, so a skill argument ``"red, blue"`` is translated."""
        if isinstance(value, str):
            if table is self._to_public:
                return self.to_public_text(value)
            return self.to_canonical_text(value)
        if isinstance(value, dict):
            return {self._values(k, table): self._values(v, table) for k, v in value.items()}
        if isinstance(value, list):
            return [self._values(v, table) for v in value]
        if isinstance(value, tuple):
            return tuple(self._values(v, table) for v in value)
        return value

    # -- text -------------------------------------------------------------------------------
    def to_public_text(self, text: str) -> str:
        """Canonical attribute values in ``text`` replaced by their public values."""
        if self._public_re is None or not text:
            return text
        return self._public_re.sub(lambda m: self._to_public[m.group(0)], text)

    def to_canonical_text(self, text: str) -> str:
        """Public attribute values in ``text`` replaced by their canonical values."""
        if self._canonical_re is None or not text:
            return text
        return self._canonical_re.sub(lambda m: self._to_canonical[m.group(0)], text)

    def to_public_status(self, text: str) -> str:
        """A status text for the agent: per feedback line ``robot: tool ... with message:``
        the tool and its parameter names become public; tool names and attribute values
        elsewhere too."""
        out = []
        for line in text.split("\n"):
            match = FEEDBACK_LINE.match(line)
            if match:
                tool = match["tool"]
                public, params = self._real_tools.get(tool, (tool, {}))
                message = line[match.end():]
                for real, pub in params.items():
                    if real != pub:
                        message = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(real)}(?![A-Za-z0-9_])", pub, message)
                line = (f"{match['robot']}: {public} {match['verb']} with message: "
                        f"{self._public_names(message)}")
            else:
                line = self._public_names(line)
            out.append(line)
        return "\n".join(out)

    def _public_names(self, text: str) -> str:
        text = CALL_LABEL.sub(self._public_label, text)
        text = self.to_public_text(text)
        if self._tool_re is not None:
            text = self._tool_re.sub(lambda m: self._tool_names[m.group(0)], text)
        return text

    def _public_label(self, match: re.Match) -> str:
        """A call label ``tool(key=value, ...)`` with the tool's public parameter names (the
        tool name and values are translated with the rest of the text)."""
        entry = self._real_tools.get(match["tool"])
        if entry is None:
            return match.group(0)
        params = entry[1]
        args = LABEL_KEY.sub(lambda m: params.get(m["key"], m["key"]) + "=", match["args"])
        return f"{match['tool']}({args})"

    # -- structured views -------------------------------------------------------------------
    def get_randomized_attributes(self, attributes: JSONDict) -> JSONDict:
        """Attributes as the agent sees them: values public, lists and keys in spec order
        (unknown values and keys last); ``known_robots`` untouched."""
        out: JSONDict = {}
        for key, value in attributes.items():
            if key == ROBOTS:
                out[key] = copy.deepcopy(value)
                continue
            public = self._values(copy.deepcopy(value), self._to_public)
            order = self.spec.attribute_values_order.get(key)
            if isinstance(public, list) and order:
                rank = {v: i for i, v in enumerate(order)}
                public = sorted(public, key=lambda v: rank.get(v, len(rank)) if isinstance(v, str)
                                else len(rank))
            out[key] = public
        rank = {k: i for i, k in enumerate(self.spec.attribute_keys_order)}
        return {k: out[k] for k in sorted(out, key=lambda k: rank.get(k, len(rank)))}

    def to_public_value(self, value: JSONValue) -> JSONValue:
        """Strings (recursively, keys included) with public names, e.g. an agent memory."""
        if isinstance(value, str):
            return self.to_public_text(value)
        if isinstance(value, dict):
            return {self.to_public_value(k): self.to_public_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.to_public_value(v) for v in value]
        return copy.deepcopy(value)

    def to_public_trace(self, trace: PerfectTrace) -> PerfectTrace:
        """A ``PerfectTrace`` as the agent would play it in the public names."""
        events: list[TraceEvent] = []
        for event in trace.events:
            if isinstance(event, ToolCallEvent):
                calls = []
                for call in event.calls:
                    name, args = self.to_public_call(call.name, call.arguments)
                    calls.append(ToolCall(name, args, call.target_robot_name))
                events.append(ToolCallEvent(calls, copy.deepcopy(event.completed_todos)))
            elif isinstance(event, MessageEvent):
                events.append(MessageEvent(self.to_public_text(event.content), event.mode,
                                           copy.deepcopy(event.completed_todos)))
            elif isinstance(event, UserEvent):
                events.append(UserEvent(self.to_public_text(event.content)))
            else:  # results: the engine's feedback, not the agent's side
                events.append(copy.deepcopy(event))
        return PerfectTrace(events, trace.nb_decision)
