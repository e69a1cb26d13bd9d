"""The sorting scenario's requests: what a user may ask, as stages plus their reference trace.

| request | stages |
| --- | --- |
| ``SortCube`` | put a named cube in a zone; a completion answer |
| ``SortColourFamily`` | put every warm (or cool) cube in a zone: one stage per cube, any order |
| ``ClearZone`` | move everything out of a zone into another: one stage per cube |
| ``ForbidRule`` | a rule for the rest of the task ("never use zone_c"): acknowledged (SAY_ONLY) |
| ``TableQuestion`` | where is a cube? (text-only: JUDGE, or SAY_ONLY with ``judged=False``) |
| ``ChangeTarget`` | "put A and B in zone_a" ... "actually, put them in zone_c": two stages |

Requests respect the forbidden objects and areas of earlier rules and never put more than
``ZONE_CAPACITY`` cubes in one zone. Names in instructions are attribute values
(``red_cube``, ``zone_b``), so name randomization translates them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from magma_core.simulation.data_structures import ToolCall
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import (
    BaseRequest,
    ForbidConstraint,
    MessageEvent,
    RuleRenderer,
    TaskState,
    ToolCallEvent,
    TraceEvent,
    UserEvent,
)
from magma_scenarios.common.stages import Acknowledge, AnswerQuestion, CountInZone, ObjectsToZones

ZONE_CAPACITY = 2  # free_spot keeps two cubes apart enough to pick them again
#: Colour families (colour reasoning): which cubes are warm and which are cool.
FAMILIES = {
    "warm": ["red_cube", "yellow_cube", "orange_cube"],
    "cool": ["green_cube", "blue_cube", "purple_cube"],
}


# -- state helpers --------------------------------------------------------------------------
def where(state: TaskState, obj: str) -> str | None:
    return state.relations["object_area"].get(obj)


def load(state: TaskState, zone: str) -> int:
    return sum(1 for z in state.relations["object_area"].values() if z == zone)


def free_objects(state: TaskState) -> list[str]:
    forbidden = state.properties.get("forbidden_objects", [])
    return [o for o in state.attributes["objects"] if o not in forbidden]


def usable_zones(state: TaskState) -> list[str]:
    forbidden = state.properties.get("forbidden_areas", [])
    return [z for z in state.attributes["areas"] if z not in forbidden]


def _move(obj: str, zone: str) -> list[TraceEvent]:
    return [ToolCallEvent([ToolCall("pick", {"object": obj})]),
            ToolCallEvent([ToolCall("place", {"area": zone})])]


def _moved(state: TaskState, objs: list[str], zone: str) -> TaskState:
    for obj in objs:
        state.relations["object_area"][obj] = zone
    return state


# -- requests -------------------------------------------------------------------------------
class SortCube(BaseRequest[dict]):
    """Put one named cube in a zone.

    ``combinations`` (optional) restricts the request to those (object, zone, template
    index) triples: the held-out splits (``magma_scenarios.sorting.splits``) give training
    and held-out definitions disjoint sets. Without it every pair and template may be drawn,
    with the same draws as ever (the frozen suites keep their fingerprints)."""

    TEMPLATES = ("Put the {o} in {z}.", "Please move the {o} to {z}.", "Place the {o} in {z}.")

    def __init__(self, combinations: Iterable[tuple[str, str, int]] | None = None) -> None:
        self.combinations = None if combinations is None else frozenset(combinations)

    def _options(self, state: TaskState) -> list[tuple[str, str]]:
        pairs = [(o, z) for o in free_objects(state) for z in usable_zones(state)
                 if where(state, o) != z and load(state, z) < ZONE_CAPACITY]
        if self.combinations is None:
            return pairs
        return [p for p in pairs if any((*p, t) in self.combinations for t in range(len(self.TEMPLATES)))]

    def sampling_weight(self, state: TaskState) -> float:
        return 3.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        if self.combinations is None:
            obj, zone = rng.choice(self._options(state))
            template = rng.choice(self.TEMPLATES)
        else:
            triples = sorted((o, z, t) for o, z in self._options(state)
                             for t in range(len(self.TEMPLATES)) if (o, z, t) in self.combinations)
            obj, zone, index = rng.choice(triples)
            template = self.TEMPLATES[index]
        return {"object": obj, "zone": zone, "text": template.format(o=obj, z=zone)}

    def combination(self, params: dict) -> tuple[str, ...] | None:
        """(object, zone, template index): the template found by rendering each in turn."""
        for index, template in enumerate(self.TEMPLATES):
            if template.format(o=params["object"], z=params["zone"]) == params.get("text"):
                return (params["object"], params["zone"], str(index))
        return (params["object"], params["zone"], "?")

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [ObjectsToZones({params["object"]: params["zone"]}, params["text"], True)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        obj, zone = params["object"], params["zone"]
        return [UserEvent(params["text"]), *_move(obj, zone), MessageEvent(f"The {obj} is in {zone}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _moved(state, [params["object"]], params["zone"])

    def describe(self, params: dict) -> str:
        return f"SortCube {params['object']} -> {params['zone']}"


class _MoveGroup(BaseRequest[dict]):
    """Several cubes (``params["objects"]``) into one zone (``params[zone_key]``): one stage
    per cube placed, in any order; the trace moves them in turn, then says ``_done``."""

    zone_key = "zone"

    def _options(self, state: TaskState) -> list[tuple[str, str, list[str]]]:
        raise NotImplementedError

    def _parameters(self, option: tuple[str, str, list[str]]) -> dict:
        raise NotImplementedError

    def _done(self, params: dict) -> str:
        raise NotImplementedError

    def sampling_weight(self, state: TaskState) -> float:
        return 2.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        return self._parameters(rng.choice(self._options(state)))

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        todo, zone = params["objects"], params[self.zone_key]
        return [
            CountInZone(todo, zone, k, params["text"] if k == 1 else None, k == len(todo))
            for k in range(1, len(todo) + 1)
        ]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        events: list[TraceEvent] = [UserEvent(params["text"])]
        for obj in params["objects"]:
            events += _move(obj, params[self.zone_key])
        return [*events, MessageEvent(self._done(params))]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _moved(state, params["objects"], params[self.zone_key])


class SortColourFamily(_MoveGroup):
    """Put every cube of a colour family (warm or cool) in a zone, in any order."""

    def _options(self, state: TaskState) -> list[tuple[str, str, list[str]]]:
        present, free = set(state.attributes["objects"]), set(free_objects(state))
        out = []
        for family, cubes in FAMILIES.items():
            members = [c for c in cubes if c in present]
            if not members or any(c not in free for c in members):
                continue  # a rule forbids touching one of them
            for zone in usable_zones(state):
                todo = [c for c in members if where(state, c) != zone]
                if len(todo) >= 2 and load(state, zone) + len(todo) <= ZONE_CAPACITY:
                    out.append((family, zone, todo))
        return out

    def _parameters(self, option: tuple[str, str, list[str]]) -> dict:
        family, zone, todo = option
        return {"family": family, "zone": zone, "objects": todo,
                "text": f"Put all the {family}-coloured cubes in {zone}."}

    def _done(self, params: dict) -> str:
        names = ", ".join(params["objects"])
        return f"The {params['family']} cubes ({names}) are in {params['zone']}."

    def describe(self, params: dict) -> str:
        return f"SortColourFamily {params['family']} {params['objects']} -> {params['zone']}"


class ClearZone(_MoveGroup):
    """Move every cube out of one zone into another."""

    zone_key = "target"

    def _options(self, state: TaskState) -> list[tuple[str, str, list[str]]]:
        free, zones = set(free_objects(state)), usable_zones(state)
        out = []
        for source in zones:
            inside = [o for o in state.attributes["objects"] if where(state, o) == source]
            if not inside or any(o not in free for o in inside):
                continue
            for target in zones:
                if target != source and load(state, target) + len(inside) <= ZONE_CAPACITY:
                    out.append((source, target, inside))
        return out

    def _parameters(self, option: tuple[str, str, list[str]]) -> dict:
        source, target, inside = option
        return {"source": source, "target": target, "objects": inside,
                "text": f"Move everything out of {source} and into {target}."}

    def _done(self, params: dict) -> str:
        return f"{params['source']} is empty; its cubes are in {params['target']}."

    def describe(self, params: dict) -> str:
        return f"ClearZone {params['source']} {params['objects']} -> {params['target']}"


class ForbidRule(BaseRequest[dict]):
    """A rule for the rest of the task: never use an (empty) zone, or never touch a cube.

    At most one zone (two stay usable) and two cubes are forbidden per task.
    """

    def _options(self, state: TaskState) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if not state.properties.get("forbidden_areas") and len(usable_zones(state)) > 2:
            out += [("areas", z) for z in usable_zones(state) if load(state, z) == 0]
        if len(state.properties.get("forbidden_objects", [])) < 2:
            out += [("objects", o) for o in free_objects(state)]
        return out

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        kind, name = rng.choice(self._options(state))
        text = (f"From now on, never use {name}." if kind == "areas"
                else f"From now on, do not touch the {name}.")
        return {"kind": kind, "name": name, "text": text}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [Acknowledge(params["text"])]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(params["text"]), MessageEvent(f"Understood: I will leave {params['name']} alone.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return ForbidConstraint(params["kind"], params["name"]).apply(state)

    def describe(self, params: dict) -> str:
        return f"ForbidRule {params['kind']} {params['name']}"


class TableQuestion(BaseRequest[dict]):
    """Where is a cube? Text-only: judged against the true zone (``judged=True``) or any
    non-empty answer (SAY_ONLY)."""

    def __init__(self, judged: bool = True) -> None:
        self.judged = judged

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        obj = rng.choice(list(state.attributes["objects"]))
        zone = where(state, obj)
        fact = f"the {obj} is in {zone}" if zone else f"the {obj} is not in any zone"
        return {"object": obj, "fact": fact, "text": f"Where is the {obj} now?"}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        rule = f"The answer says that {params['fact']}."
        return [AnswerQuestion(params["text"], rule, say_only=not self.judged)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        fact = params["fact"]
        return [UserEvent(params["text"]), MessageEvent(fact[0].upper() + fact[1:] + ".")]

    def describe(self, params: dict) -> str:
        return f"TableQuestion {params['object']}: {params['fact']}"


class ChangeTarget(BaseRequest[dict]):
    """A mid-task change of target: "put A and B in zone X", then, once A is there,
    "actually, put them in zone Y instead"."""

    def _options(self, state: TaskState) -> list[tuple[str, str, str, str]]:
        objs, zones = free_objects(state), usable_zones(state)
        out = []
        for first in zones:
            for second in zones:
                if first == second or load(state, first) >= ZONE_CAPACITY:
                    continue
                if load(state, second) + 2 > ZONE_CAPACITY:
                    continue
                movable = [o for o in objs if where(state, o) not in (first, second)]
                out += [(a, b, first, second) for a in movable for b in movable if a < b]
        return out

    def sampling_weight(self, state: TaskState) -> float:
        return 1.5 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        a, b, first, second = rng.choice(self._options(state))
        if rng.random() < 0.5:
            a, b = b, a
        return {"objects": [a, b], "first": first, "second": second,
                "text": f"Put the {a} and then the {b} in {first}.",
                "change": f"Actually, put them both in {second} instead."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        a, b = params["objects"]
        return [
            ObjectsToZones({a: params["first"]}, params["text"]),
            ObjectsToZones({a: params["second"], b: params["second"]}, params["change"], True),
        ]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        a, b = params["objects"]
        second = params["second"]
        return [UserEvent(params["text"]), *_move(a, params["first"]), UserEvent(params["change"]),
                *_move(a, second), *_move(b, second), MessageEvent(f"The {a} and the {b} are in {second}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        return _moved(state, params["objects"], params["second"])

    def describe(self, params: dict) -> str:
        a, b = params["objects"]
        return f"ChangeTarget {a}, {b}: {params['first']} -> {params['second']}"


class SortingRules(RuleRenderer):
    """The rules a sorting task's state imposes (forbidden zones and cubes)."""

    def rules(self, state: TaskState) -> list[str]:
        out = [f"Never use {z}." for z in state.properties.get("forbidden_areas", [])]
        return out + [f"Do not touch the {o}." for o in state.properties.get("forbidden_objects", [])]
