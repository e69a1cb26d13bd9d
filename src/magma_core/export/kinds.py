"""What a chat row holds: which of its assistant turns are masked (``"weight": 0``), its
``kind`` (``clean``, ``coached``, ``recovery`` or ``perturbed``), and the manifest's counts per
kind.

How the environment answered a decision (:func:`failure_of`, from its stored execution): nothing
failed (None); ``agent``: the agent's mistake (a tool call the world or the stage refused, e.g.
"the gripper already holds an object", or no tool call in a stage that needs one); ``injected``:
only calls an injected error failed (a grasp slip); ``system``: only calls the planner could not
plan. The last two are the world's failures: the decision was right and stays trained on.

A turn is masked when its decision is a mistake: the agent's (``failure == "agent"``) or one a
coach diagnosed and repaired (``Candidate.repairs`` names it). It stays in the conversation, so
the turns after it learn from it, but carries no loss.

A row's kind is the first that applies:

- ``coached``: a coach's repair right after the decision it repaired, the environment's report
  of that decision between them (mistake, weight 0 → report → fix);
- ``recovery``: a failed attempt (a decision whose ``failure`` is set: the agent's mistake or the
  world's failure), its report, and later in the row a decision that worked (nothing failed);
- ``perturbed``: from a task with an injected condition (a tree whose task names one of
  :data:`CONDITIONS`, or an injected error on the row's path) and no recovery in the row (e.g. an
  interruption or a mission update followed);
- ``clean``: none of these (a path on which nothing failed, from a clean task; a coach's repair
  in place of the mistake, with the mistake not shown, is clean).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.export.rows import Candidate, Situation

CLEAN, COACHED, RECOVERY, PERTURBED = "clean", "coached", "recovery", "perturbed"
#: the kinds, in the order the first that applies is taken (clean when none does)
KINDS = (COACHED, RECOVERY, PERTURBED, CLEAN)
AGENT, INJECTED, SYSTEM = "agent", "injected", "system"
#: the bench's conditions other than clean (``magma_core.bench.conditions.CONDITIONS``, which
#: export may not import; a test keeps the two equal): a task perturbed by one is named
#: ``NAME.CONDITION`` (bench items, ``sorting.PerturbedPairSortingTrain``)
CONDITIONS = ("execution_error", "interruption", "mission_update", "combined", "paraphrase")
#: failure flags of a call the system caused (the engine forgives them, up to a limit)
_WORLD_FLAGS = {"injection_error": INJECTED, "planner_error": SYSTEM}

Step = tuple["Situation", "Candidate"]


def failure_of(execution: JSONDict | None) -> tuple[str | None, int]:
    """``(failure, calls that succeeded)`` of a stored execution (a generation candidate's or
    a run step's: ``calls``, ``stage_success``, ``verification``); see the module doc. A
    decision with no call that the engine did not verify and that left its stage going on is
    a no-action step (an answer is always verified)."""
    execution = execution or {}
    calls = [c for c in execution.get("calls") or [] if isinstance(c, dict)]
    ok = sum(1 for c in calls if c.get("ok"))
    failed = [c for c in calls if not c.get("ok")]
    if failed:
        world = [_world(c) for c in failed]
        if None in world:
            return AGENT, ok
        return (INJECTED if INJECTED in world else SYSTEM), ok
    if not calls and execution and execution.get("verification") is None \
            and execution.get("stage_success") == "ONGOING":
        return AGENT, ok  # no action where the stage needs one
    return None, ok


def _world(call: JSONDict) -> str | None:
    if call.get("injected"):
        return INJECTED
    return _WORLD_FLAGS.get(str(call.get("failure_flag") or ""))


def condition_of(task_name: str | None) -> str | None:
    """The condition a task's name says was injected into it (``NAME.CONDITION``), or None."""
    suffix = (task_name or "").rsplit(".", 1)[-1]
    return suffix if suffix in CONDITIONS else None


def masked_steps(steps: Sequence[Step], faulty: set[str]) -> frozenset[int]:
    """Positions of the steps whose assistant turn is masked: the agent's mistakes and the
    decisions a coach repaired (keys in ``faulty``)."""
    return frozenset(n for n, (_, c) in enumerate(steps) if c.failure == AGENT or c.key in faulty)


def holds(steps: Sequence[Step], condition: str | None) -> list[str]:
    """Every kind the row of ``steps`` holds but ``clean``, in :data:`KINDS` order."""
    out = []
    coach = [c for _, c in steps]
    if any(c.origin != "model" and c.repairs is not None and c.repairs == coach[n - 1].key
           for n, c in enumerate(coach) if n):
        out.append(COACHED)
    failed = [n for n, c in enumerate(coach) if c.failure is not None]
    if failed and any(c.failure is None and c.decision is not None for c in coach[failed[0] + 1:]):
        out.append(RECOVERY)
    if condition or any(c.failure == INJECTED for c in coach):
        out.append(PERTURBED)
    return out


def kind_of(steps: Sequence[Step], condition: str | None) -> str:
    """The row's kind: the first kind it holds, else ``clean``."""
    return next(iter(holds(steps, condition)), CLEAN)


def dialogue_identity(row: JSONDict) -> str:
    """What makes two rows the same dialogue: their messages after the system message
    (roles, contents, tool calls, weights), so the same exchange in a world described in
    another order (or with other attributes) counts once."""
    dialogue = [{k: m.get(k) for k in ("role", "content", "tool_calls", "tool_call_id", "weight")}
                for m in row.get("messages") or [] if m.get("role") != "system"]
    return hashlib.sha256(json.dumps(dialogue, sort_keys=True, default=str).encode()).hexdigest()


def kind_counts(rows: Iterable[tuple[str, JSONDict]]) -> dict[str, dict[str, int]]:
    """Per kind (every kind, zeros included): ``rows``; ``conversations``, distinct dialogues
    (:func:`dialogue_identity`); ``trees``, distinct groups; ``complete``, rows whose last turn
    finished the task; ``masked_turns``, assistant turns of weight 0."""
    out: dict[str, dict[str, int]] = {}
    seen: dict[str, tuple[set[str], set[str]]] = {}
    for kind in KINDS:
        out[kind] = {"rows": 0, "conversations": 0, "trees": 0, "complete": 0, "masked_turns": 0}
        seen[kind] = (set(), set())
    for group, row in rows:
        kind = row.get("kind") if row.get("kind") in out else CLEAN
        counts, (dialogues, groups) = out[kind], seen[kind]
        counts["rows"] += 1
        counts["complete"] += bool(row.get("complete"))
        counts["masked_turns"] += sum(1 for m in row.get("messages") or [] if m.get("weight") == 0)
        dialogues.add(dialogue_identity(row))
        groups.add(group)
        counts["conversations"], counts["trees"] = len(dialogues), len(groups)
    return out
