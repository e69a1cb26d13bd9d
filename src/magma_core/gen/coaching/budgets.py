"""Coaching budgets per stage of a tree (the predecessor's counters).

``pending``: requests sent to the coach and not answered yet. ``unproven``: attempts asked or
injected whose continuation has not reached the stage's success yet (the predecessor's
pending + completed - success). An attempt stops being unproven when it is proven (a
continuation succeeded), abandoned (the coach gave no repair) or refuted (every coached
continuation ended without success so far; a later success still proves it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Defaults of ``--coaching-max-pending`` and ``--coaching-max-unproven``.
MAX_PENDING = 2
MAX_UNPROVEN = 4


@dataclass
class CoachingBudget:
    """Counts per ``(tree, stage)``; :meth:`refusal` says whether another request fits."""

    max_pending: int = MAX_PENDING
    max_unproven: int = MAX_UNPROVEN
    pending: dict[tuple[int, int], set[int]] = field(default_factory=dict)
    unproven: dict[tuple[int, int], set[int]] = field(default_factory=dict)

    def refusal(self, key: tuple[int, int]) -> str | None:
        """Why no new request fits stage ``key`` now (None: it fits)."""
        if len(self.pending.get(key, ())) >= self.max_pending:
            return f"{self.max_pending} coaching request(s) already pending in this stage"
        if len(self.unproven.get(key, ())) >= self.max_unproven:
            return f"{self.max_unproven} unproven coaching attempt(s) already in this stage"
        return None

    def asked(self, key: tuple[int, int], attempt: int) -> None:
        self.pending.setdefault(key, set()).add(attempt)
        self.unproven.setdefault(key, set()).add(attempt)

    def answered(self, key: tuple[int, int], attempt: int, corrected: bool) -> None:
        self.pending.get(key, set()).discard(attempt)
        if not corrected:
            self.unproven.get(key, set()).discard(attempt)

    def settled(self, key: tuple[int, int], attempt: int) -> None:
        """The attempt is proven or refuted: it no longer counts as unproven."""
        self.pending.get(key, set()).discard(attempt)
        self.unproven.get(key, set()).discard(attempt)
