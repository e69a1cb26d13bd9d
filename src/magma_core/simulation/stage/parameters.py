"""Stage parameters: global switches (reset, attribute edits, text-only mode) and errors."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Self

from magma_core.json_types import JSONDict
from magma_core.serialization import contract_base, object_from_spec, object_to_spec
from magma_core.simulation.errors.base import BaseError


class TextOnlyValidationMode(StrEnum):
    """How a text-only stage's answer is validated."""

    JUDGE = "judge"  # a judge checks the answer against the verification prompt
    SAY_ONLY = "say_only"  # any non-empty user-facing message is accepted


class _SpecDataclass:
    def to_spec(self) -> JSONDict:
        return object_to_spec(self, {f.name: getattr(self, f.name) for f in fields(self)})  # type: ignore[arg-type]

    @classmethod
    def from_spec(cls, spec: JSONDict) -> Self:
        return object_from_spec(spec, cls)


@contract_base
@dataclass
class StageGlobalParameters(_SpecDataclass):
    """Stage-wide switches. A non-None ``verification_prompt`` makes the stage text-only.

    ``allow_tools_before_answer`` and ``allowed_tools`` only apply to text-only stages; an
    empty ``allowed_tools`` then means every tool.
    """

    reset_at_end: bool = False
    additive_stage: bool = False
    verification_prompt: str | None = None
    allow_tools_before_answer: bool = False
    allowed_tools: list[str] = field(default_factory=list)
    text_only_validation: TextOnlyValidationMode = TextOnlyValidationMode.JUDGE

    def __post_init__(self) -> None:
        self.allowed_tools = list(self.allowed_tools)
        if isinstance(self.text_only_validation, str):
            self.text_only_validation = TextOnlyValidationMode(self.text_only_validation)


@contract_base
@dataclass
class StageErrorParameters(_SpecDataclass):
    """The errors a stage may inject and how many to activate per trajectory.

    The count is drawn uniformly in ``[min(min_active_errors, n), min(max_active_errors, n)]``
    where n is the number of possible errors (see :meth:`sample`).
    """

    possible_errors: list[BaseError] = field(default_factory=list)
    min_active_errors: int = 1
    max_active_errors: int = 1

    def __post_init__(self) -> None:
        self.possible_errors = list(self.possible_errors)

    def sample(self, rng: random.Random) -> list[BaseError]:
        """Draw the active errors with ``rng`` (pass a seeded one for reproducible runs)."""
        n = len(self.possible_errors)
        low, high = min(self.min_active_errors, n), min(self.max_active_errors, n)
        return rng.sample(self.possible_errors, rng.randint(low, high))
