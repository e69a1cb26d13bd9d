"""The kitchen scenario's requests: stages plus the reference trace that solves them.

| request | stages |
| --- | --- |
| ``PutAway`` | every object of a kind into a container: one stage per object |
| ``Fetch`` | bring an object (from wherever it is, hidden or not) to the counter |
| ``TidyCounter`` | everything on the counter into a container; sometimes someone has just
  taken an object out of ``bowl_a`` and left it on the counter (an entry transition) |
| ``WhereIs`` | where is an object? (text-only; the answer may be a hidden place) |
| ``WhatInside`` | what is in a drawer or the box? (text-only: open, look, answer) |
| ``DrawerRule`` | "never leave a drawer open": later stages must end with every drawer closed |
| ``KeepOut`` | "keep the cups out of bowl_a": later stages fail if one goes in |

The state (``TaskState``) keeps each object's place (``object_place``), which counter spot
it holds (``counter_spot``), which articulations are open (``open``), whether the box is
latched and the rules. A move plans its calls from that state: unlatch and open what holds
the object or must receive it, pick, place, and (under the drawer rule) close the drawers
it opened. Requests that use a drawer left open sometimes find it closed by someone else
(``CloseAtEntry``); the trace opens it again.
"""

from __future__ import annotations

import copy
import random

from magma_core.json_types import JSONValue
from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.stage import BaseStageEnvironmentTransition, BaseTaskStage
from magma_core.simulation.tasks import (
    BaseRequest,
    MessageEvent,
    RuleRenderer,
    TaskState,
    ToolCallEvent,
    TraceEvent,
    UserEvent,
)
from magma_scenarios.common.stages import Acknowledge
from magma_scenarios.kitchen import world as w
from magma_scenarios.kitchen.questions import LookInside
from magma_scenarios.kitchen.stages import CloseAtEntry, KitchenStage, MoveToCounterAtEntry

CLOSE_CHANCE = 0.35  # how often a request finds a drawer it needs closed by someone else


# -- the state ------------------------------------------------------------------------------
def starting_state() -> TaskState:
    """The world's start (``world.START``): everything closed, the box unlatched."""
    places = {o: ("counter" if isinstance(v, int) else v) for o, v in w.START.items()}
    spots = {o: v for o, v in w.START.items() if isinstance(v, int)}
    return TaskState(
        attributes={"objects": [o.name for o in w.OBJECTS], "places": list(w.PLACES)},
        relations={"object_place": places, "counter_spot": spots,
                   "object_kind": {o.name: o.kind for o in w.OBJECTS}},
        properties={"open": {j: False for j in w.JOINTS}, "latched": False,
                    "drawer_rule": False, "keep_out": []},
    )


def place(state: TaskState, obj: str) -> str:
    return state.relations["object_place"][obj]


def joint_of(where: str) -> str | None:
    """The drawer or box that must be open to reach into ``where``."""
    if where in w.JOINTS:
        return where
    return w.BOWL_IN_DRAWER.get(where)


def load(state: TaskState, where: str) -> int:
    return sum(1 for p in state.relations["object_place"].values() if p == where)


def room(state: TaskState, where: str) -> int:
    """How many more objects ``where`` takes."""
    if where == "counter":
        return len(w.COUNTER_SPOTS) - load(state, "counter")
    if where in w.BOWL_IN_DRAWER.values():
        return 0  # a drawer holding a bowl has no room beside it
    return w.CAPACITY - load(state, where)


def kept_out(state: TaskState) -> dict[str, list[str]]:
    """Container → the objects a rule keeps out of it."""
    out: dict[str, list[str]] = {}
    for kind, container in state.properties["keep_out"]:
        objs = [o for o, k in state.relations["object_kind"].items() if k == kind]
        out.setdefault(container, []).extend(objs)
    return out


def allowed(state: TaskState, obj: str, where: str) -> bool:
    return obj not in kept_out(state).get(where, [])


def describe_place(where: str) -> str:
    if where == "counter":
        return "on the counter"
    if where in w.BOWL_IN_DRAWER:
        return f"in {where}, inside {w.BOWL_IN_DRAWER[where]}"
    return f"in {where}"


def _call(tool: str, **arguments: JSONValue) -> ToolCallEvent:
    return ToolCallEvent([ToolCall(tool, arguments)])


def _goal_joints(state: TaskState) -> dict[str, str]:
    return {d: "closed" for d in w.DRAWERS} if state.properties["drawer_rule"] else {}


def _open(state: TaskState, joint: str) -> list[TraceEvent]:
    if state.properties["open"][joint]:
        return []
    events: list[TraceEvent] = []
    if joint == w.BOX and state.properties["latched"]:
        events.append(_call("unlatch"))
        state.properties["latched"] = False
    state.properties["open"][joint] = True
    return [*events, _call("open", target=joint)]


def _close_drawers(state: TaskState) -> list[TraceEvent]:
    """Under the drawer rule: close every open drawer."""
    if not state.properties["drawer_rule"]:
        return []
    events = []
    for d in w.DRAWERS:
        if state.properties["open"][d]:
            state.properties["open"][d] = False
            events.append(_call("close", target=d))
    return events


def move(state: TaskState, obj: str, dest: str) -> list[TraceEvent]:
    """The calls that bring ``obj`` to ``dest`` (and update ``state``)."""
    events: list[TraceEvent] = []
    for where in (place(state, obj), dest):
        joint = joint_of(where)
        if joint is not None:
            events += _open(state, joint)
    events += [_call("pick", object=obj), _call("place", location=dest)]
    state.relations["object_place"][obj] = dest
    spots = state.relations["counter_spot"]
    spots.pop(obj, None)
    if dest == "counter":
        spots[obj] = min(set(range(len(w.COUNTER_SPOTS))) - set(spots.values()))
    return events + _close_drawers(state)


def _stage(state: TaskState, text: str | None, events: list[TraceEvent], placements: dict,
           last: bool, transition: BaseStageEnvironmentTransition | None = None) -> KitchenStage:
    calls = sum(1 for e in events if isinstance(e, ToolCallEvent))
    return KitchenStage(text, calls, placements, _goal_joints(state), kept_out(state),
                        flag_answer_to_user=last, entry_transition=transition)


def _maybe_closed(state: TaskState, rng: random.Random, needed: list[str]) -> str | None:
    """A needed drawer (or the box: then latched too) left open that someone closes
    before the request, now and then."""
    open_needed = [j for j in needed if state.properties["open"][j]]
    if open_needed and rng.random() < CLOSE_CHANCE:
        return rng.choice(open_needed)
    return None


# -- requests that move things ----------------------------------------------------------------
class _Moves(BaseRequest[dict]):
    """Objects ``params["objects"]`` to ``params["dest"]``, one stage per object; the stages
    and the trace are planned together on a copy of the state."""

    weight = 2.0

    def _options(self, state: TaskState) -> list[dict]:
        raise NotImplementedError

    def sampling_weight(self, state: TaskState) -> float:
        return self.weight if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        params = dict(rng.choice(self._options(state)))
        needed = [joint_of(place(state, o)) for o in params["objects"]] + [joint_of(params["dest"])]
        params["closed_at_entry"] = _maybe_closed(state, rng, [j for j in needed if j])
        return params

    def _plan(self, state: TaskState, params: dict) -> tuple[list[KitchenStage], list[TraceEvent],
                                                              TaskState]:
        state = copy.deepcopy(state)
        transition = None
        if params.get("moved_out"):
            obj, spot = params["moved_out"], params["spot"]
            transition = MoveToCounterAtEntry(obj, spot)
            state.relations["object_place"][obj] = "counter"
            state.relations["counter_spot"][obj] = spot
        if params.get("closed_at_entry"):
            closed = params["closed_at_entry"]
            transition = CloseAtEntry(closed, latch=closed == w.BOX)
            state.properties["open"][closed] = False
            state.properties["latched"] = state.properties["latched"] or closed == w.BOX
        stages, events = [], [UserEvent(params["text"])]
        todo = params["objects"]
        for k, obj in enumerate(todo):
            part = move(state, obj, params["dest"])
            stages.append(_stage(state, params["text"] if k == 0 else None, part,
                                 {obj: params["dest"]}, k == len(todo) - 1,
                                 transition if k == 0 else None))
            events += part
        return stages, [*events, MessageEvent(self._done(params))], state

    def _done(self, params: dict) -> str:
        names = ", ".join(params["objects"])
        return f"Done: {names} {describe_place(params['dest'])}."

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return self._plan(state, params)[0]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return self._plan(state, params)[1]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return self._plan(state, params)[2]

    def describe(self, params: dict) -> str:
        extra = f" (someone closed {params['closed_at_entry']})" if params.get("closed_at_entry") else ""
        return f"{self.get_request_type()} {params['objects']} -> {params['dest']}{extra}"


class PutAway(_Moves):
    """Put every object of a kind (not yet there) into one container."""

    def _options(self, state: TaskState) -> list[dict]:
        out = []
        for kind in w.KINDS:
            objs = [o for o, k in state.relations["object_kind"].items() if k == kind]
            for dest in w.CONTAINERS:
                todo = [o for o in objs if place(state, o) != dest]
                if todo and len(todo) <= room(state, dest) and all(allowed(state, o, dest) for o in objs):
                    out.append({"kind": kind, "dest": dest, "objects": todo,
                                "text": f"Put away the {kind}s in {dest}."})
        return out


class Fetch(_Moves):
    """Bring one object to the counter, from wherever it is."""

    weight = 1.5

    def _options(self, state: TaskState) -> list[dict]:
        if room(state, "counter") < 1:
            return []
        return [{"dest": "counter", "objects": [o], "text": f"Bring me the {o}, please."}
                for o in state.attributes["objects"] if place(state, o) != "counter"]

    def _done(self, params: dict) -> str:
        return f"The {params['objects'][0]} is on the counter."


class TidyCounter(_Moves):
    """Everything on the counter into one container. Sometimes someone has just taken an
    object out of ``bowl_a`` and left it on the counter (``MoveToCounterAtEntry``)."""

    weight = 1.5

    def _options(self, state: TaskState) -> list[dict]:
        out = []
        on = [o for o in state.attributes["objects"] if place(state, o) == "counter"]
        in_bowl = [o for o in state.attributes["objects"] if place(state, o) == "bowl_a"]
        for dest in w.CONTAINERS:
            for extra in [None, *in_bowl]:
                todo = on + ([extra] if extra else [])
                if dest == "bowl_a" and extra:
                    continue
                if todo and len(todo) <= room(state, dest) and all(allowed(state, o, dest) for o in todo):
                    out.append({"dest": dest, "objects": todo, "moved_out": extra})
        return out

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        params = super().sample_parameters(state, rng)
        text = f"Tidy the counter: put everything on it in {params['dest']}."
        if params["moved_out"]:
            spots = set(state.relations["counter_spot"].values())
            params["spot"] = min(set(range(len(w.COUNTER_SPOTS))) - spots)
            params["closed_at_entry"] = None  # one transition per stage
            text = f"I took the {params['moved_out']} out of bowl_a and left it there. " + text
        params["text"] = text
        return params

    def _done(self, params: dict) -> str:
        return f"The counter is tidy: {', '.join(params['objects'])} {describe_place(params['dest'])}."


# -- questions ------------------------------------------------------------------------------
class WhereIs(BaseRequest[dict]):
    """Where is an object? Answered from memory (hidden places included)."""

    def __init__(self, judged: bool = False) -> None:
        self.judged = judged

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        obj = rng.choice(list(state.attributes["objects"]))
        fact = f"the {obj} is {describe_place(place(state, obj))}"
        return {"object": obj, "fact": fact, "text": f"Where is the {obj} now?"}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [LookInside(params["text"], params["fact"], 0, say_only=not self.judged)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        fact = params["fact"]
        return [UserEvent(params["text"]), MessageEvent(fact[0].upper() + fact[1:] + ".")]

    def describe(self, params: dict) -> str:
        return f"WhereIs {params['object']}: {params['fact']}"


def contents(state: TaskState, where: str) -> str:
    """What ``where`` holds, in words."""
    inside = [o for o in state.attributes["objects"] if place(state, o) == where]
    bowls = [b for b, d in w.BOWL_IN_DRAWER.items() if d == where]
    parts = [f"the {o}" for o in inside]
    for b in bowls:
        held = [o for o in state.attributes["objects"] if place(state, o) == b]
        parts.append(f"{b} (with {', '.join(held)} in it)" if held else f"{b} (empty)")
    return f"{where} holds " + " and ".join(parts) if parts else f"{where} is empty"


class WhatInside(BaseRequest[dict]):
    """What is in a drawer or the box? The trace opens it (if closed), looks, answers (and
    closes a drawer again under the drawer rule)."""

    def __init__(self, judged: bool = False) -> None:
        self.judged = judged

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        where = rng.choice(list(w.JOINTS))
        return {"where": where, "fact": contents(state, where), "text": f"What is in {where}?"}

    def _plan(self, state: TaskState, params: dict) -> tuple[list[TraceEvent], TaskState]:
        state = copy.deepcopy(state)
        events = _open(state, params["where"]) + [_call("detect_objects")] + _close_drawers(state)
        return events, state

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        calls = len(self._plan(state, params)[0])
        return [LookInside(params["text"], params["fact"], calls, say_only=not self.judged)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        fact = params["fact"]
        return [UserEvent(params["text"]), *self._plan(state, params)[0],
                MessageEvent(fact[0].upper() + fact[1:] + ".")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return self._plan(state, params)[1]

    def describe(self, params: dict) -> str:
        return f"WhatInside {params['where']}: {params['fact']}"


# -- rules ----------------------------------------------------------------------------------
class DrawerRule(BaseRequest[dict]):
    """"Never leave a drawer open" (once per task, asked while every drawer is closed)."""

    TEXT = "From now on, never leave a drawer open."

    def sampling_weight(self, state: TaskState) -> float:
        props = state.properties
        return 0.0 if props["drawer_rule"] or any(props["open"][d] for d in w.DRAWERS) else 1.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        return {"text": self.TEXT}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [Acknowledge(params["text"])]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(params["text"]), MessageEvent("Understood: I will close every drawer I open.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        state.properties["drawer_rule"] = True
        return state

    def describe(self, params: dict) -> str:
        return "DrawerRule"


class KeepOut(BaseRequest[dict]):
    """"Keep the <kind>s out of <container>" (none of them is in it now); two rules at most."""

    def _options(self, state: TaskState) -> list[tuple[str, str]]:
        if len(state.properties["keep_out"]) >= 2:
            return []
        kinds = state.relations["object_kind"]
        return [(k, c) for k in w.KINDS for c in w.CONTAINERS
                if [k, c] not in state.properties["keep_out"]
                and not any(kinds[o] == k and place(state, o) == c for o in kinds)]

    def sampling_weight(self, state: TaskState) -> float:
        return 0.7 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        kind, container = rng.choice(self._options(state))
        return {"kind": kind, "container": container,
                "text": f"From now on, keep the {kind}s out of {container}."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [Acknowledge(params["text"])]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(params["text"]),
                MessageEvent(f"Understood: no {params['kind']} goes in {params['container']}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        state.properties["keep_out"] = [*state.properties["keep_out"], [params["kind"], params["container"]]]
        return state

    def describe(self, params: dict) -> str:
        return f"KeepOut {params['kind']} from {params['container']}"


class KitchenRules(RuleRenderer):
    """The rules a kitchen task's state imposes."""

    def rules(self, state: TaskState) -> list[str]:
        out = ["Never leave a drawer open."] if state.properties.get("drawer_rule") else []
        return out + [f"Keep the {k}s out of {c}." for k, c in state.properties.get("keep_out", [])]
