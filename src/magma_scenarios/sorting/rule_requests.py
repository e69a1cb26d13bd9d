"""Requests of ``sorting.RuleSorting``: rules given once and followed later, built on the
predecessor's templates (``magma_scenarios.templates``).

| request | template | stages |
| --- | --- | --- |
| ``ColourRule`` | ``GiveRelationAssignmentRequest`` (colour -> zone, ``type_area``) | the rule, acknowledged |
| ``CubeRule`` | ``GiveObjectAssignmentRequest`` (cube -> zone, ``object_rule``) | the rule, acknowledged |
| ``DefaultRule`` | ``RelationDefaultConstraint`` ("anything else goes to ...") | the rule, acknowledged |
| ``SortByRule`` | ``resolve`` | "put the X where it belongs": a guarded move, an answer |
| ``VagueRequest`` | ``MissingInformationStage`` | "put the X away": the agent asks where |
| ``ForbiddenZoneRequest`` | ``ForbiddenElemStage`` | "put the X in <forbidden zone>": the agent refuses |

Every move after a ``ForbidRule`` (acknowledged SAY_ONLY) is a ``GuardedObjectsToZones``:
its goals also fail (-1) when a forbidden cube leaves its place or a cube enters a
forbidden zone, so a later breach of the rule fails the stage.
"""

from __future__ import annotations

import random

from magma_core.simulation.goals import NotAt
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseRequest, MessageEvent, TaskState, TraceEvent, UserEvent
from magma_scenarios.common.stages import ZONE_THRESH, ObjectsToZones
from magma_scenarios.sorting.requests import (
    ZONE_CAPACITY,
    SortCube,
    _move,
    free_objects,
    load,
    usable_zones,
    where,
)
from magma_scenarios.templates.constraints import RelationDefaultConstraint, resolve
from magma_scenarios.templates.requests import (
    BaseConstraintRequest,
    ConstraintParameters,
    GiveObjectAssignmentRequest,
    GiveRelationAssignmentRequest,
)
from magma_scenarios.templates.stages import ForbiddenElemStage, MissingInformationStage


class GuardedObjectsToZones(ObjectsToZones):
    """``ObjectsToZones`` whose goals also keep the rules: ``kept`` cubes stay where they are
    (``None``: on the table), no cube enters a ``closed`` zone (each breach -1)."""

    def __init__(self, placements: dict[str, str], instruction: str | None, flag_answer_to_user: bool,
                 kept: dict[str, str | None], closed: list[str], objects: list[str],
                 zones: list[str]) -> None:
        super().__init__(placements, instruction, flag_answer_to_user)
        self.kept, self.closed = dict(kept), list(closed)
        self.all_objects, self.all_zones = list(objects), list(zones)
        for obj, home in self.kept.items():
            elsewhere = [z for z in zones if z != home]
            if elsewhere:
                self.goals.append(NotAt(obj, elsewhere, strict=True, thresh=ZONE_THRESH))
        for zone in self.closed:
            for obj in objects:
                self.goals.append(NotAt(obj, zone, strict=True, thresh=ZONE_THRESH))

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"placements": self.placements, "instruction": self.instruction_text,
                "flag_answer_to_user": self.stage_input.flag_answer_to_user, "kept": self.kept,
                "closed": self.closed, "objects": self.all_objects, "zones": self.all_zones}


def guarded_move(state: TaskState, obj: str, zone: str, text: str) -> GuardedObjectsToZones:
    """The move of ``obj`` to ``zone``, guarded by the state's forbid rules."""
    kept = {o: where(state, o) for o in state.properties.get("forbidden_objects", [])}
    return GuardedObjectsToZones({obj: zone}, text, True, kept,
                                 list(state.properties.get("forbidden_areas", [])),
                                 list(state.attributes["objects"]), list(state.attributes["areas"]))


def colours(state: TaskState) -> list[str]:
    return sorted(set(state.relations["object_type"].values()))


class ColourRule(GiveRelationAssignmentRequest):
    """"From now on, red cubes go to zone_b." (``type_area``)."""

    def __init__(self) -> None:
        super().__init__("type_area", "object_type", "areas", max_simultaneous_change=2)

    def targets(self, state: TaskState) -> list[str]:
        return usable_zones(state)

    def text(self, pairs: list[tuple[str, str]]) -> str:
        return "From now on: " + "; ".join(f"{c} cubes go to {z}" for c, z in pairs) + "."


class CubeRule(GiveObjectAssignmentRequest):
    """"From now on: the blue_cube goes to zone_a." (its own rule, over its colour's)."""

    def __init__(self) -> None:
        super().__init__(max_simultaneous_change=1, relation="object_rule")

    def sources(self, state: TaskState) -> list[str]:
        return free_objects(state)

    def targets(self, state: TaskState) -> list[str]:
        return usable_zones(state)


class DefaultRule(BaseConstraintRequest):
    """"Anything without a rule goes to zone_X." (``RelationDefaultConstraint``; clears the
    colour rules)."""

    def sampling_weight(self, state: TaskState) -> float:
        return 0.5 if state.properties.get("type_area_default") is None else 0.0

    def sample_constraints(self, state: TaskState, rng: random.Random) -> ConstraintParameters:
        zone = rng.choice(usable_zones(state))
        return ConstraintParameters((RelationDefaultConstraint("type_area", zone, "areas"),),
                                    f"New rule: any cube without its own rule goes to {zone}.")


def target_of(state: TaskState, obj: str) -> str | None:
    """Where the rules send ``obj``: its own rule, else its colour's, else the default."""
    own = state.relations.get("object_rule", {}).get(obj)
    return own or resolve(state, "type_area", state.relations["object_type"][obj])


class SortByRule(BaseRequest[dict]):
    """"Put the X where it belongs." (the rule decides where)."""

    def _options(self, state: TaskState) -> list[tuple[str, str]]:
        out = []
        for obj in free_objects(state):
            zone = target_of(state, obj)
            if zone in usable_zones(state) and where(state, obj) != zone and load(state, zone) < ZONE_CAPACITY:
                out.append((obj, zone))
        return out

    def sampling_weight(self, state: TaskState) -> float:
        return 3.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        obj, zone = rng.choice(self._options(state))
        return {"object": obj, "zone": zone, "text": f"Put the {obj} where it belongs."}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [guarded_move(state, params["object"], params["zone"], params["text"])]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        obj, zone = params["object"], params["zone"]
        return [UserEvent(params["text"]), *_move(obj, zone), MessageEvent(f"The {obj} is in {zone}.")]

    def apply_request(self, state: TaskState, params: dict) -> TaskState:
        state.relations["object_area"][params["object"]] = params["zone"]
        return state


class VagueRequest(BaseRequest[dict]):
    """"Put the X away." with no rule for X: the agent must ask where (no tool call)."""

    def __init__(self, say_only: bool = True) -> None:
        self.say_only = say_only

    def _options(self, state: TaskState) -> list[str]:
        return [o for o in free_objects(state) if target_of(state, o) is None]

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if self._options(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        return {"object": rng.choice(self._options(state))}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [MissingInformationStage(f"Put the {params['object']} away.", "zone",
                                        say_only=self.say_only)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(f"Put the {params['object']} away."),
                MessageEvent(f"Which zone should the {params['object']} go to?")]


class ForbiddenZoneRequest(BaseRequest[dict]):
    """"Put the X in <a forbidden zone>.": the agent must refuse (no tool call)."""

    def __init__(self, say_only: bool = True) -> None:
        self.say_only = say_only

    def sampling_weight(self, state: TaskState) -> float:
        return 1.0 if state.properties.get("forbidden_areas") and free_objects(state) else 0.0

    def sample_parameters(self, state: TaskState, rng: random.Random) -> dict:
        return {"object": rng.choice(free_objects(state)),
                "zone": rng.choice(state.properties["forbidden_areas"])}

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        zone = params["zone"]
        return [ForbiddenElemStage(f"Put the {params['object']} in {zone}.", zone,
                                   f"never use {zone}", say_only=self.say_only)]

    def perfect_trace(self, state: TaskState, params: dict) -> list[TraceEvent]:
        return [UserEvent(f"Put the {params['object']} in {params['zone']}."),
                MessageEvent(f"I cannot: you asked me never to use {params['zone']}.")]


class GuardedSortCube(SortCube):
    """``SortCube`` whose move also keeps the forbid rules (see ``GuardedObjectsToZones``)."""

    request_type = "SortCube"

    def create_stages(self, state: TaskState, params: dict) -> list[BaseTaskStage]:
        return [guarded_move(state, params["object"], params["zone"], params["text"])]
