"""Correction opportunities: which stored candidates end a branch in a way a coach may repair,
and the stage trajectory (with its diagnosable decisions) that a coach is shown.

Terminal events (the predecessor's): ``failure`` (a FAILED stage, or an episode that ended in
error), ``no_action`` (an action stage without tool calls, too long), ``exceeded`` (a budget),
``format_error`` (no parseable decision) and ``finish_suboptimal`` (the stage finished
ACCEPTABLE). The trajectory is the run of decisions of the terminal candidate's stage along
its path; decisions before the last coached one on it are not diagnosable (that repair stands).
Works on a :class:`TreeIndex`, a light copy of the stored tree, so it is tested on hand-built
trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FAILURE, NO_ACTION, EXCEEDED, FORMAT, SUBOPTIMAL = (
    "failure", "no_action", "exceeded", "format_error", "finish_suboptimal")
#: The request kind of each event (``CoachingRequest.kind``) and its repair focus.
KIND = {FAILURE: "failure", NO_ACTION: "failure", EXCEEDED: "failure", FORMAT: "format",
        SUBOPTIMAL: "suboptimal"}
FOCUS = {FAILURE: "diagnosis", NO_ACTION: "diagnosis", EXCEEDED: "diagnosis", FORMAT: "format_fix",
         SUBOPTIMAL: "suboptimal_diagnosis"}
FIXED, RECOVERY = "fixed", "recovery"  # coaching roles of a coached candidate


@dataclass
class Place:
    """A situation: its tree, stage, the candidate that led to it and the input it sends."""

    id: int
    tree: int
    stage: int
    parent: int | None
    agent_input: dict[str, Any]
    depth: int = 0
    idle: int = 0


@dataclass
class Node:
    """A stored candidate as coaching sees it; ``coaching`` is its coaching record (role,
    request, type, source, attempt) when a coach made it."""

    id: int
    situation: int
    candidate_index: int
    stage: int
    decision: dict[str, Any] | None
    execution: dict[str, Any] | None
    end: str
    episode: str
    error: dict[str, Any] | None = None
    next_situation: int | None = None
    coaching: dict[str, Any] | None = None


@dataclass
class TreeIndex:
    """The situations and candidates of a generation, as far as coaching needs them."""

    places: dict[int, Place] = field(default_factory=dict)
    nodes: dict[int, Node] = field(default_factory=dict)
    by_situation: dict[int, dict[int, int]] = field(default_factory=dict)  # sid -> index -> cid

    def add_place(self, place: Place) -> None:
        self.places[place.id] = place

    def add_node(self, node: Node) -> None:
        self.nodes[node.id] = node
        self.by_situation.setdefault(node.situation, {})[node.candidate_index] = node.id

    def path(self, candidate: int) -> list[tuple[Place, Node]]:
        """The (situation, candidate) steps from the root to ``candidate`` (inclusive)."""
        steps: list[tuple[Place, Node]] = []
        node: Node | None = self.nodes[candidate]
        while node is not None:
            place = self.places[node.situation]
            steps.append((place, node))
            node = self.nodes.get(place.parent) if place.parent is not None else None
        return steps[::-1]


def terminal_event(node: Node) -> str | None:
    """The terminal event ``node`` is, or None (an ongoing or optimal decision, a decision cap)."""
    execution = node.execution or {}
    if node.episode == "invalid" or (node.decision is None and node.execution is None):
        return FORMAT
    if node.episode == "no_action":
        return NO_ACTION
    if execution.get("stage_success") == "FAILED":
        return FAILURE
    if execution.get("stage_state") == "EXCEEDED":
        return EXCEEDED
    if node.end == "suboptimal":
        return SUBOPTIMAL
    if node.end == "error" and node.episode not in ("running", "success", "decision_cap"):
        return FAILURE
    return None


def coaching_type(event: str, text_only: bool = False) -> str:
    """``"<event>:<focus>"``; a text-only stage's failure is a ``text_only_rewrite``."""
    focus = "text_only_rewrite" if text_only and KIND[event] == "failure" else FOCUS[event]
    return f"{event}:{focus}"


@dataclass
class Trajectory:
    """The terminal candidate's stage decisions along its path, oldest first, and which of
    them a coach may name as the root cause."""

    steps: list[tuple[Place, Node]]
    diagnosable: list[bool]

    @property
    def candidates(self) -> list[int]:
        return [n.id for _, n in self.steps]

    def diagnosable_steps(self) -> list[int]:
        """Positions (into ``steps``) of the diagnosable decisions."""
        return [i for i, ok in enumerate(self.diagnosable) if ok]


def stage_trajectory(index: TreeIndex, candidate: int) -> Trajectory:
    """The trajectory a coach sees for the terminal ``candidate`` (see the module docstring)."""
    path = index.path(candidate)
    stage = path[-1][1].stage
    start = len(path)
    while start > 0 and path[start - 1][1].stage == stage:
        start -= 1
    steps = path[start:]
    last_coached = max((i for i, (_, n) in enumerate(steps) if n.coaching), default=-1)
    return Trajectory(steps, [i > last_coached for i in range(len(steps))])


def skip_reason(index: TreeIndex, trajectory: Trajectory, kind: str, faulty: set[int]) -> str | None:
    """Why this opportunity gets no coaching (None: it may be coached): nothing diagnosable;
    a decision on it was already diagnosed faulty (its repair exists); or a coached decision
    of the same type in this stage of the path (no repeated coaching on the same path)."""
    if not trajectory.diagnosable_steps():
        return "nothing diagnosable (the decisions before it are a coach's repair)"
    if any(cid in faulty for cid in trajectory.candidates):
        return "a decision on this path was already diagnosed and repaired"
    for _, node in trajectory.steps:
        if node.coaching and node.coaching.get("type") == kind:
            return f"{kind} coaching was already applied on this path in this stage"
    return None
