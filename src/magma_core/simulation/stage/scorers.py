"""Scorers: rule-based checks of a text answer, beside the model judge.

A scorer decides a text-only stage's answer without a model: :class:`Contains`,
:class:`Exact`, :class:`Regex`, :class:`OneOf` and :class:`Numeric` (a number within a
tolerance) ship here; a scenario adds its own by subclassing :class:`BaseScorer` (any
importable subclass loads from its spec, nothing else does). A stage uses one by setting
``scorer`` (``ScoredQuestionStage(question, scorer)``, or ``self.scorer = ...`` in any
text-only stage); a suite item sets one per stage with its skeleton's ``scorers`` key
(``{1: {one_of: [two, "2"]}}``, see :func:`scorer_from_config`). A stage with a scorer
needs no ``--judge``: the scorer is its judge (it implements the engine's ``Judge``).

Answers are compared after :func:`normalise` (case folded unless ``case_sensitive``,
whitespace collapsed, surrounding punctuation dropped). A regex is data, never code: its
length is bounded, constructs that can backtrack without end (a quantified group holding a
quantifier, back-references) are refused, and only the answer's first
:data:`MAX_ANSWER_CHARS` characters are searched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from magma_core.json_types import JSONDict, JSONValue
from magma_core.serialization import contract_base, object_from_spec, object_to_spec
from magma_core.simulation.data_structures.verdict import Verdict

MAX_PATTERN_CHARS = 200
MAX_ANSWER_CHARS = 2000
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?:[+*]|\{\d*,?\d*\})(?:[^()\\]|\\.)*\)\s*(?:[+*]|\{)")
_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}


def normalise(text: str, case_sensitive: bool = False) -> str:
    """``text`` compared as scorers compare it: whitespace collapsed, surrounding spaces and
    sentence punctuation dropped, case folded unless ``case_sensitive``."""
    out = " ".join(str(text).split()).strip(" .!?;:,")
    return out if case_sensitive else out.casefold()


@contract_base
class BaseScorer:
    """A rule-based check of an answer. Subclasses define :meth:`check` (``(ok, reason)``)
    and ``_to_spec_arguments`` (their constructor's arguments), and may override
    :meth:`describe` (the rule in words, shown in records)."""

    def check(self, answer: str) -> tuple[bool, str]:
        raise NotImplementedError(f"{type(self).__name__} must define check(answer)")

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._to_spec_arguments().items())
        return f"{type(self).__name__}({args})"

    def score(self, answer: str) -> Verdict:
        """The verdict on ``answer`` (an empty answer fails)."""
        if not isinstance(answer, str) or not answer.strip():
            return Verdict(ok=False, reason="The answer is empty.", attempts=1)
        ok, reason = self.check(answer[:MAX_ANSWER_CHARS])
        return Verdict(ok=bool(ok), reason=str(reason), attempts=1)

    def judge(self, rule: str, question: str, answer: str) -> Verdict:
        """The engine's ``Judge`` interface: the scorer's own rule replaces ``rule``."""
        return self.score(answer)

    def _to_spec_arguments(self) -> dict[str, object]:
        raise NotImplementedError(f"{type(self).__name__} must define _to_spec_arguments()")

    def to_spec(self) -> JSONDict:
        return object_to_spec(self, self._to_spec_arguments())

    @classmethod
    def from_spec(cls, spec: JSONDict) -> BaseScorer:
        return object_from_spec(spec, BaseScorer)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_spec() == self.to_spec()

    def __hash__(self) -> int:
        return hash(repr(self.to_spec()))

    def __repr__(self) -> str:
        return self.describe()


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty str, got {value!r}")
    return value


class Contains(BaseScorer):
    """The answer contains ``text`` (as words, after :func:`normalise`)."""

    def __init__(self, text: str, case_sensitive: bool = False) -> None:
        self.text, self.case_sensitive = _text(text, "Contains.text"), bool(case_sensitive)

    def check(self, answer: str) -> tuple[bool, str]:
        wanted = normalise(self.text, self.case_sensitive)
        found = re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", normalise(answer, self.case_sensitive))
        return (True, f"The answer contains {self.text!r}.") if found else (
            False, f"The answer does not contain {self.text!r}.")

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"text": self.text, "case_sensitive": self.case_sensitive}


class Exact(BaseScorer):
    """The answer is ``text`` (after :func:`normalise`)."""

    def __init__(self, text: str, case_sensitive: bool = False) -> None:
        self.text, self.case_sensitive = _text(text, "Exact.text"), bool(case_sensitive)

    def check(self, answer: str) -> tuple[bool, str]:
        if normalise(answer, self.case_sensitive) == normalise(self.text, self.case_sensitive):
            return True, f"The answer is {self.text!r}."
        return False, f"The answer is not {self.text!r}."

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"text": self.text, "case_sensitive": self.case_sensitive}


class OneOf(BaseScorer):
    """The answer is one of ``options`` (after :func:`normalise`)."""

    def __init__(self, options: Sequence[str], case_sensitive: bool = False) -> None:
        if isinstance(options, str) or not options:
            raise ValueError(f"OneOf.options must be a non-empty list of str, got {options!r}")
        self.options = [_text(o, "each of OneOf.options") for o in options]
        self.case_sensitive = bool(case_sensitive)

    def check(self, answer: str) -> tuple[bool, str]:
        given = normalise(answer, self.case_sensitive)
        if any(given == normalise(o, self.case_sensitive) for o in self.options):
            return True, "The answer is one of the accepted answers."
        return False, f"The answer is none of {self.options!r}."

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"options": list(self.options), "case_sensitive": self.case_sensitive}


class Regex(BaseScorer):
    """The answer matches ``pattern`` (``re.search``; ``full``: the whole normalised answer).

    The pattern is bounded (see the module): a pattern that could backtrack without end, or
    longer than :data:`MAX_PATTERN_CHARS`, is refused when the scorer is made."""

    def __init__(self, pattern: str, full: bool = False, case_sensitive: bool = False) -> None:
        self.pattern, self.full, self.case_sensitive = _text(pattern, "Regex.pattern"), bool(full), bool(case_sensitive)
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ValueError(f"Regex.pattern is {len(pattern)} characters; at most {MAX_PATTERN_CHARS}")
        if _NESTED_QUANTIFIER.search(pattern) or _BACKREFERENCE.search(pattern):
            raise ValueError(f"Regex.pattern {pattern!r} holds a quantified group with a quantifier "
                             "inside, or a back-reference (either can take exponential time); "
                             "write it without")
        try:
            self._compiled = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"Regex.pattern {pattern!r} is not a regular expression: {exc}") from None

    def check(self, answer: str) -> tuple[bool, str]:
        text = normalise(answer, case_sensitive=True)
        match = self._compiled.fullmatch(text) if self.full else self._compiled.search(text)
        return (True, f"The answer matches {self.pattern!r}.") if match else (
            False, f"The answer does not match {self.pattern!r}.")

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"pattern": self.pattern, "full": self.full, "case_sensitive": self.case_sensitive}


class Numeric(BaseScorer):
    """The answer holds a number within ``tolerance`` of ``value`` (digits, or the words
    zero to twenty); with several numbers, any one within the tolerance passes."""

    def __init__(self, value: float, tolerance: float = 0.0) -> None:
        for name, number in (("value", value), ("tolerance", tolerance)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                raise ValueError(f"Numeric.{name} must be a finite number, got {number!r}")
        if tolerance < 0:
            raise ValueError(f"Numeric.tolerance must be >= 0, got {tolerance}")
        self.value, self.tolerance = value, tolerance

    def check(self, answer: str) -> tuple[bool, str]:
        numbers = [float(n.replace(",", ".")) for n in _NUMBER.findall(answer)]
        numbers += [float(NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", answer.casefold()) if w in NUMBER_WORDS]
        within = f"{self.value:g}" + (f" ± {self.tolerance:g}" if self.tolerance else "")
        if not numbers:
            return False, f"The answer holds no number; expected {within}."
        if any(abs(n - self.value) <= self.tolerance + 1e-9 for n in numbers):
            return True, f"The answer gives {within}."
        return False, f"The answer gives {', '.join(f'{n:g}' for n in numbers)}, not {within}."

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"value": self.value, "tolerance": self.tolerance}


#: Short names of the shipped scorers, for :func:`scorer_from_config`; a package adds its
#: own with :func:`register_scorer`.
SCORERS: dict[str, Callable[..., BaseScorer]] = {}


def register_scorer(name: str, factory: Callable[..., BaseScorer]) -> None:
    """Make ``{name: ARGUMENT, ...}`` in a suite spec build ``factory`` (a BaseScorer class)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"a scorer name is lowercase letters, digits and '_', got {name!r}")
    SCORERS[name] = factory


for _name, _cls in (("contains", Contains), ("exact", Exact), ("one_of", OneOf),
                    ("regex", Regex), ("numeric", Numeric)):
    register_scorer(_name, _cls)

_FIRST_ARGUMENT = {"contains": "text", "exact": "text", "one_of": "options", "regex": "pattern",
                   "numeric": "value"}


def scorer_from_config(config: BaseScorer | Mapping[str, JSONValue] | JSONValue) -> BaseScorer:
    """A scorer from a suite spec's short form: ``{contains: pasta}``, ``{exact: two}``,
    ``{one_of: [two, "2"]}``, ``{regex: "^\\\\d+ cans?$"}``, ``{numeric: 2, tolerance: 0.5}``,
    plus options (``case_sensitive``, ``full``); or a full spec ``{type: "module:Class",
    arguments: {...}}`` naming any :class:`BaseScorer` subclass. ``ValueError`` names what
    is wrong."""
    if isinstance(config, BaseScorer):
        return config
    if not isinstance(config, dict) or not config:
        raise ValueError(f"a scorer is a mapping such as {{contains: TEXT}}, got {config!r}")
    if set(config) == {"type", "arguments"}:
        try:
            return BaseScorer.from_spec(config)
        except TypeError as exc:
            raise ValueError(str(exc)) from None
    kinds = [k for k in config if k in SCORERS]
    if len(kinds) != 1:
        raise ValueError(f"a scorer names exactly one of {', '.join(sorted(SCORERS))}, got {sorted(config)}")
    kind = kinds[0]
    options = {k: v for k, v in config.items() if k != kind}
    first = _FIRST_ARGUMENT.get(kind)
    value = config[kind]
    if first:
        arguments = {first: value, **options}
    elif value is None or isinstance(value, dict):
        arguments = {**(value or {}), **options}
    else:
        raise ValueError(f"{kind} takes a mapping of its arguments, got {value!r}")
    try:
        return SCORERS[kind](**arguments)
    except TypeError as exc:
        raise ValueError(f"scorer {kind}: {exc}") from None
