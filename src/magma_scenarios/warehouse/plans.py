"""Reference plans for the warehouse: which arm does what, decision by decision.

A plan is a list of decisions; a decision is a list of calls ``(robot, tool, arguments)``
made side by side. :func:`replay` checks a plan against the world's rules (reach, one box
per slot, one box per gripper) without the simulator; the requests and the benchmark
transforms use it to keep every reference trace valid.
"""

from __future__ import annotations

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.tasks import ToolCallEvent
from magma_scenarios.warehouse.world import HANDOVERS, INITIAL, REACH, ROBOTS, SLOTS, side_of

Call = tuple[str, str, JSONDict]
Decision = list[Call]


def pick(robot: str, box: str) -> Call:
    return (robot, "pick", {"object": box})


def place(robot: str, slot: str) -> Call:
    return (robot, "place", {"slot": slot})


def events(plan: list[Decision]) -> list[ToolCallEvent]:
    """The trace events of ``plan`` (one ``ToolCallEvent`` per decision)."""
    return [ToolCallEvent([ToolCall(tool, dict(args), robot) for robot, tool, args in d]) for d in plan]


def free_handover(where: dict[str, str | None], avoid: tuple[str, ...] = ()) -> str | None:
    """The first empty hand-over slot not in ``avoid``."""
    used = set(where.values()) | set(avoid)
    return next((h for h in HANDOVERS if h not in used), None)


def move(box: str, source: str, target: str, via: str | None = None) -> list[Decision]:
    """Move ``box`` from ``source`` to ``target``: one arm when one reaches both, else
    through the hand-over slot ``via`` (four decisions)."""
    for robot in ROBOTS:
        if source in REACH[robot] and target in REACH[robot]:
            return [[pick(robot, box)], [place(robot, target)]]
    if via is None:
        raise ValueError(f"moving the {box} from {source} to {target} needs a hand-over slot")
    first, second = side_of(source), side_of(target)
    assert first is not None and second is not None
    return [[pick(first, box)], [place(first, via)], [pick(second, box)], [place(second, target)]]


def swap(a: str, slot_a: str, b: str, slot_b: str) -> tuple[list[Decision], list[Decision]]:
    """Swap box ``a`` (in ``slot_a``, one side) and ``b`` (in ``slot_b``, the other side)
    through both hand-over slots: (to the hand-over slots, from them), two decisions each,
    both arms in every decision."""
    ra, rb = side_of(slot_a), side_of(slot_b)
    if ra is None or rb is None or ra == rb:
        raise ValueError("a swap takes one box from each side")
    h1, h2 = HANDOVERS
    there = [[pick(ra, a), pick(rb, b)], [place(ra, h1), place(rb, h2)]]
    back = [[pick(ra, b), pick(rb, a)], [place(ra, slot_a), place(rb, slot_b)]]
    return there, back


def replay(calls: list[Call], where: dict[str, str | None] | None = None,
           finished: bool = True) -> dict[str, str | None]:
    """Where each box is after ``calls`` (from ``where``, default the initial layout; None:
    held). ``ValueError`` at the first call the world would refuse, or (``finished``) when a
    box is still held at the end. A pick of the box the arm already holds is a retry (after
    a jammed call) and changes nothing."""
    where = dict(INITIAL if where is None else where)
    held: dict[str, str | None] = {r: None for r in ROBOTS}
    for robot, tool, args in calls:
        if tool == "pick":
            box = args.get("object")
            if held[robot] == box:
                continue
            slot = where.get(box)
            if held[robot] is not None or slot is None or slot not in REACH[robot]:
                raise ValueError(f"{robot} cannot pick the {box}")
            where[box], held[robot] = None, box
        elif tool == "place":
            slot = args.get("slot")
            if held[robot] is None or slot not in REACH[robot] or slot in where.values():
                raise ValueError(f"{robot} cannot place in {slot}")
            where[held[robot]], held[robot] = slot, None
        elif tool not in ("clear_jam", "check_stock"):
            raise ValueError(f"unknown tool {tool}")
    if finished and any(held.values()):
        raise ValueError("a plan must not end with a box in a gripper")
    return where


def empty_slots(where: dict[str, str | None], robot: str | None = None) -> list[str]:
    """Empty slots that are not hand-over slots (on ``robot``'s side when given)."""
    used = set(where.values())
    return [s for s in SLOTS if s not in used and s not in HANDOVERS
            and (robot is None or side_of(s) == robot)]
