"""The warehouse's requests: what a user may ask, as stages plus their reference trace.

| request | stages |
| --- | --- |
| ``MoveOrder`` | a box to an empty slot on its own side "within N tool calls" (the stage's deadline) |
| ``Transfer`` | a box to the other side: to a hand-over slot, then on (two stages) |
| ``SwapBoxes`` | a box of each side change places through both hand-over slots (two stages) |
| ``StockQuestion`` | where is a box / how many boxes on an arm's side / which slots are empty |

The task state's relation ``box_slot`` says where each box is; every request's trace is
checked with :func:`~magma_scenarios.warehouse.plans.replay`. Names in instructions are
attribute values (``red_box``, ``dock_a``), so name randomization translates them.
"""

from __future__ import annotations

import random

from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseRequest, MessageEvent, TaskState, TraceEvent, UserEvent
from magma_scenarios.common.stages import AnswerQuestion
from magma_scenarios.warehouse import plans
from magma_scenarios.warehouse.stages import ANY_HANDOVER, Deliver
from magma_scenarios.warehouse.world import BOXES, HANDOVERS, INITIAL, ROBOTS, SLOTS, side_of


def starting_state() -> TaskState:
    """The initial layout: two boxes on each arm's shelves."""
    return TaskState(attributes={"objects": list(BOXES), "slots": list(SLOTS)},
                     relations={"box_slot": dict(INITIAL)})


def where(state: TaskState) -> dict[str, str | None]:
    return dict(state.relations["box_slot"])


def _placed(state: TaskState, moves: dict[str, str]) -> TaskState:
    state.relations["box_slot"].update(moves)
    return state


class MoveOrder(BaseRequest[dict]):
    """A box to an empty slot of its own side, with a deadline in tool calls."""

    TEMPLATES = ("Move the {b} to {s} within {n} tool calls.",
                 "Order: the {b} goes to {s}; you have {n} tool calls.",
                 "Within {n} tool calls, put the {b} in {s}.")

    def _options(self, state: TaskState) -> list[tuple[str, str, str]]:
        at = where(state)
        return [(b, at[b], s) for b in BOXES if at.get(b) and side_of(at[b])
                for s in plans.empty_slots(at, side_of(at[b]))]

    def sampling_weight(self, state: TaskState) -> float:
        return 3.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        box, source, slot = rng.choice(self._options(state))
        deadline = 2 + rng.randint(0, 2)
        text = rng.choice(self.TEMPLATES).format(b=box, s=slot, n=deadline)
        return {"object": box, "source": source, "slot": slot, "deadline": deadline, "text": text}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [Deliver({params["object"]: params["slot"]}, params["text"], 2, params["deadline"], True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        box, slot = params["object"], params["slot"]
        return [UserEvent(params["text"]), *plans.events(plans.move(box, params["source"], slot)),
                MessageEvent(f"The {box} is in {slot}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _placed(state, {params["object"]: params["slot"]})

    def describe(self, params: dict) -> str:
        return f"MoveOrder {params['object']} -> {params['slot']} within {params['deadline']}"


class Transfer(BaseRequest[dict]):
    """A box to an empty slot of the other side, through a hand-over slot."""

    TEMPLATES = ("Send the {b} to {s}.", "The {b} is needed in {s} on the other side.",
                 "Transfer the {b} to {s}.")

    def _options(self, state: TaskState) -> list[tuple[str, str, str]]:
        at = where(state)
        out = []
        for b in BOXES:
            side = side_of(at[b]) if at.get(b) else None
            if side is None:
                continue
            other = next(r for r in ROBOTS if r != side)
            out += [(b, at[b], s) for s in plans.empty_slots(at, other)]
        return out

    def sampling_weight(self, state: TaskState) -> float:
        return 2.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        box, source, slot = rng.choice(self._options(state))
        return {"object": box, "source": source, "slot": slot,
                "text": rng.choice(self.TEMPLATES).format(b=box, s=slot)}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        box = params["object"]
        return [Deliver({box: ANY_HANDOVER}, params["text"], 2),
                Deliver({box: params["slot"]}, None, 2, None, True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        box, slot = params["object"], params["slot"]
        via = plans.free_handover(where(state)) or HANDOVERS[0]
        plan = plans.move(box, params["source"], slot, via=via)
        return [UserEvent(params["text"]), *plans.events(plan), MessageEvent(f"The {box} is in {slot}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _placed(state, {params["object"]: params["slot"]})

    def describe(self, params: dict) -> str:
        return f"Transfer {params['object']}: {params['source']} -> {params['slot']}"


class SwapBoxes(BaseRequest[dict]):
    """A box of panda-0's side and one of panda-1's change places (a hand-over each way)."""

    def _options(self, state: TaskState) -> list[tuple[str, str, str, str]]:
        at = where(state)
        left = [(b, at[b]) for b in BOXES if at.get(b) and side_of(at[b]) == ROBOTS[0]]
        right = [(b, at[b]) for b in BOXES if at.get(b) and side_of(at[b]) == ROBOTS[1]]
        return [(a, sa, b, sb) for a, sa in left for b, sb in right]

    def sampling_weight(self, state: TaskState) -> float:
        return 1.5 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        a, sa, b, sb = rng.choice(self._options(state))
        first, second = (a, b) if rng.random() < 0.5 else (b, a)
        return {"a": a, "slot_a": sa, "b": b, "slot_b": sb,
                "text": f"Swap the {first} and the {second}."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        a, b = params["a"], params["b"]
        return [Deliver({a: ANY_HANDOVER, b: ANY_HANDOVER}, params["text"], 4),
                Deliver({a: params["slot_b"], b: params["slot_a"]}, None, 4, None, True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        a, b = params["a"], params["b"]
        there, back = plans.swap(a, params["slot_a"], b, params["slot_b"])
        return [UserEvent(params["text"]), *plans.events(there + back),
                MessageEvent(f"The {a} is in {params['slot_b']} and the {b} in {params['slot_a']}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _placed(state, {params["a"]: params["slot_b"], params["b"]: params["slot_a"]})

    def describe(self, params: dict) -> str:
        return f"SwapBoxes {params['a']} ({params['slot_a']}) <-> {params['b']} ({params['slot_b']})"


class StockQuestion(BaseRequest[dict]):
    """A question about stock: text-only, judged against the true layout (``judged=True``)
    or any non-empty answer (SAY_ONLY)."""

    def __init__(self, judged: bool = True) -> None:
        self.judged = judged

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        at = where(state)
        kind = rng.choice(["where", "count", "empty"])
        if kind == "where":
            box = rng.choice(list(BOXES))
            return {"kind": kind, "text": f"Where is the {box} now?",
                    "fact": f"the {box} is in {at[box]}"}
        if kind == "count":
            robot = rng.choice(list(ROBOTS))
            mine = sorted(b for b in BOXES if at.get(b) and side_of(at[b]) == robot)
            listed = ", ".join(f"the {b} in {at[b]}" for b in mine) or "none"
            return {"kind": kind, "text": f"How many boxes are on {robot}'s side, and which?",
                    "fact": f"{robot}'s side holds {len(mine)} box(es): {listed}"}
        empty = [s for s in SLOTS if s not in at.values()]
        return {"kind": kind, "text": "Which slots are empty right now?",
                "fact": "the empty slots are " + ", ".join(empty)}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        rule = f"The answer says that {params['fact']}."
        return [AnswerQuestion(params["text"], rule, say_only=not self.judged)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        fact = params["fact"]
        return [UserEvent(params["text"]), MessageEvent(fact[0].upper() + fact[1:] + ".")]

    def describe(self, params: dict) -> str:
        return f"StockQuestion {params['kind']}: {params['fact']}"
