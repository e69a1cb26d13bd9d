"""How the sorting scenario's tasks are perturbed for ``magma bench``.

The transforms edit a frozen task spec (``magma.task/1``: a preset wrapped as a generated task,
or a ``LongSorting`` task) and its reference trace. Action stages are ``ObjectsToZones`` and
``CountInZone``; a stage "in progress" is an action stage continuing its request (no
instruction of its own).

- ``execution_error``: the first grasp of the first ``ObjectsToZones`` stage at or after
  ``at`` slips (``GraspSlip``); the reference trace grasps again.
- ``interruption``: after the first action stage at or after ``at`` that is followed by a
  stage in progress, the user interrupts: "put the <unused cube> in <zone> first" when a cube
  is used by no stage, else a question about the cube just moved (SAY_ONLY). The next stage
  then resumes the work ("Thanks. Now continue ...").
- ``mission_update``: at the first stage in progress after ``at`` (stage ``i``), the user
  moves the cube of stage ``i + lag`` (in progress too, same request) to another zone; that
  stage's goal (a ``CountInZone`` becomes an ``ObjectsToZones``) and the trace follow. The new
  zone is never a forbidden one, and no zone ever holds more than ``ZONE_CAPACITY`` cubes.
- ``combined``: a mission update and a grasp error on the updated stage.

Options (from the suite spec): ``at``, ``lag``. A transform that does not apply raises
``ValueError`` (the suite compiler then skips that skeleton seed).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

from magma_core.json_types import JSONDict
from magma_core.serialization import encode_value
from magma_scenarios.common.spec_edits import apply_condition
from magma_scenarios.common.spec_edits import insert_stage as _insert_stage
from magma_scenarios.common.spec_edits import set_instruction as _set_instruction
from magma_scenarios.common.spec_edits import stage_args as _args
from magma_scenarios.common.spec_edits import stage_type as _type
from magma_scenarios.sorting.requests import ZONE_CAPACITY
from magma_scenarios.sorting.tools import GraspSlip

OBJECTS_TO_ZONES = "magma_scenarios.common.stages:ObjectsToZones"
COUNT_IN_ZONE = "magma_scenarios.common.stages:CountInZone"
ANSWER_QUESTION = "magma_scenarios.common.stages:AnswerQuestion"
ACTION_TYPES = (OBJECTS_TO_ZONES, COUNT_IN_ZONE)
RESUME = "Thanks. Now continue with what you were doing."


# -- reading a spec ---------------------------------------------------------------------------


def _is_action(entry: JSONDict) -> bool:
    return _type(entry) in ACTION_TYPES


def _in_progress(entry: JSONDict) -> bool:
    return _is_action(entry) and _args(entry)["instruction"] is None


def _calls(entry: JSONDict) -> int:
    """The reference tool calls of one stage."""
    args = _args(entry)
    if _type(entry) == OBJECTS_TO_ZONES:
        moves = len(args["placements"]) if args["moves"] is None else args["moves"]
        return 2 * moves + args["extra_calls"] + len(args["errors"])
    if _type(entry) == COUNT_IN_ZONE:
        return 2 * args["moves"]
    return 0


def _attributes(spec: JSONDict) -> JSONDict:
    return spec["initialization"]["situation"]["attributes"]


def _segments(spec: JSONDict) -> list[list[int]]:
    """For each stage, the indices of its reference-trace events (tool calls and the user
    events before them)."""
    events = spec["perfect_trace"]["events"]
    out: list[list[int]] = []
    cursor = 0
    for entry in spec["stages"]:
        calls = _calls(entry)
        indices: list[int] = []
        while calls and cursor < len(events):
            if events[cursor]["type"] == "tool_calls":
                calls -= 1
            indices.append(cursor)
            cursor += 1
        if calls:
            raise ValueError("the reference trace is shorter than the stages need")
        out.append(indices)
    return out


def _call(event: JSONDict) -> JSONDict | None:
    return event["calls"][0] if event["type"] == "tool_calls" and event["calls"] else None


def _moves(events: list[JSONDict]) -> Iterator[tuple[str, str | None]]:
    """(cube, zone) for each place of a held cube along the trace's events, in order."""
    held = None
    for event in events:
        call = _call(event)
        if call is None:
            continue
        if call["name"] == "pick":
            held = call["arguments"].get("object")
        elif call["name"] == "place" and held is not None:
            yield held, call["arguments"].get("area")
            held = None


def _positions(events: list[JSONDict], upto: int | None = None) -> dict[str, str | None]:
    """Where each cube is after the trace's events ``[:upto]`` (None: on the table)."""
    return dict(_moves(events[:upto]))


def _fits(events: list[JSONDict]) -> bool:
    """Along the trace no zone ever holds more than ``ZONE_CAPACITY`` cubes, and every move
    takes a cube somewhere else (a perturbation must not make a later request moot)."""
    where: dict[str, str | None] = {}
    for cube, zone in _moves(events):
        if where.get(cube) == zone:
            return False
        where[cube] = zone
        if sum(1 for z in where.values() if z == zone) > ZONE_CAPACITY:
            return False
    return True


def _forbidden(spec: JSONDict) -> set[str]:
    """Zones and cubes a rule of the task forbids (anywhere in the task)."""
    return {r["parameters"]["name"] for r in spec["requests"] if r["request_type"] == "ForbidRule"}


def _moved_objects(spec: JSONDict, segment: list[int]) -> list[str]:
    events = spec["perfect_trace"]["events"]
    return [c["arguments"]["object"] for i in segment if (c := _call(events[i])) and c["name"] == "pick"]


# -- editing a spec ---------------------------------------------------------------------------
def _entry(stage_type: str, arguments: JSONDict, request_type: str | None = None) -> JSONDict:
    return {"request_type": request_type, "spec": {"type": stage_type, "arguments": arguments},
            "flag_answer_to_user": False, "reset_at_end": False}


def _objects_to_zones(placements: dict[str, str], instruction: str | None) -> JSONDict:
    return {"placements": placements, "instruction": instruction, "flag_answer_to_user": False,
            "reset_at_end": False, "entry_transition": None, "errors": [], "extra_calls": 0,
            "moves": len(placements), "additive": False}


# -- the conditions ---------------------------------------------------------------------------
def execution_error(spec: JSONDict, at: int) -> list[JSONDict]:
    """Inject a grasp slip in the first ``ObjectsToZones`` stage from ``at``; the trace grasps
    twice."""
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    for index in range(at, len(spec["stages"])):
        entry = spec["stages"][index]
        picks = [i for i in segments[index] if (c := _call(events[i])) and c["name"] == "pick"]
        if _type(entry) != OBJECTS_TO_ZONES or not picks:
            continue
        _args(entry)["errors"] = _args(entry)["errors"] + [encode_value(GraspSlip())]
        events.insert(picks[0], copy.deepcopy(events[picks[0]]))
        return [{"type": "execution_error", "injected_at_stage": index, "relevant_at_stage": index}]
    raise ValueError(f"no ObjectsToZones stage with a grasp from stage {at}")


def interruption(spec: JSONDict, at: int) -> list[JSONDict]:
    """A direct instruction (or question) after an action stage; the work then resumes."""
    stages = spec["stages"]
    index = next((i for i in range(at, len(stages) - 1)
                  if _is_action(stages[i]) and _in_progress(stages[i + 1])), None)
    if index is None:
        raise ValueError(f"no action stage from stage {at} is followed by work in progress")
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    position = segments[index][-1] + 1
    attributes = _attributes(spec)
    used = set(_moved_objects(spec, [i for s in segments for i in s]))
    for entry in stages:
        args = _args(entry)
        used |= set(args.get("placements", {})) | set(args.get("objects", []))
    free = [o for o in attributes["objects"] if o not in used and o not in _forbidden(spec)]
    inserted: list[JSONDict] | None = None
    if free:
        after = stages[index + 1]
        targets = set(_args(after).get("placements", {}).values()) | {_args(after).get("zone")}
        for zone in attributes["areas"]:
            if zone in targets or zone in _forbidden(spec):
                continue
            text = f"Wait, first put the {free[0]} in {zone}."
            trial = [{"type": "user", "content": text},
                     *_move(free[0], zone)]
            if _fits(events[:position] + trial + events[position:]):
                entry, inserted = _entry(OBJECTS_TO_ZONES, _objects_to_zones({free[0]: zone}, text)), trial
                break
    if inserted is None:
        obj = _moved_objects(spec, segments[index])[-1]
        zone = _positions(events, position).get(obj)
        fact = f"the {obj} is in {zone}" if zone else f"the {obj} is not in any zone"
        question = f"Wait, a quick question: where is the {obj} now?"
        entry = _entry(ANSWER_QUESTION, {"question": question, "rule": f"The answer says that {fact}.",
                                         "say_only": True})
        inserted = [{"type": "user", "content": question},
                    {"type": "message", "content": fact[0].upper() + fact[1:] + "."}]
    _insert_stage(spec, index + 1, entry)
    _set_instruction(stages[index + 2], RESUME)
    events[position:position] = inserted
    return [{"type": "interruption", "injected_at_stage": index + 1, "relevant_at_stage": index + 1}]


def _move(obj: str, zone: str) -> list[JSONDict]:
    return [
        {"type": "tool_calls", "calls": [{"name": "pick", "arguments": {"object": obj},
                                          "target_robot_name": None}]},
        {"type": "tool_calls", "calls": [{"name": "place", "arguments": {"area": zone},
                                          "target_robot_name": None}]},
    ]


def mission_update(spec: JSONDict, at: int, lag: int) -> list[JSONDict]:
    """At the first stage in progress after ``at``, the user moves the cube of the stage
    ``lag`` stages later to another zone (see the module docstring)."""
    stages = spec["stages"]
    segments = _segments(spec)
    areas = [z for z in _attributes(spec)["areas"] if z not in _forbidden(spec)]
    for injected in range(at + 1, len(stages) - lag):
        relevant = injected + lag
        if not all(_in_progress(stages[i]) for i in range(injected, relevant + 1)):
            continue
        moved = _moved_objects(spec, segments[relevant])
        if not moved:
            continue
        obj = moved[0]
        target = _args(stages[relevant])
        old = target["placements"][obj] if _type(stages[relevant]) == OBJECTS_TO_ZONES else target["zone"]
        for new in areas:
            if new == old:
                continue
            events = _updated_trace(spec, segments[relevant], obj, old, new)
            if events is None or not _fits(events):
                continue
            if _type(stages[relevant]) == OBJECTS_TO_ZONES:
                target["placements"] = {**target["placements"], obj: new}
            else:
                stages[relevant]["spec"] = {"type": OBJECTS_TO_ZONES,
                                            "arguments": _objects_to_zones({obj: new}, None)}
            _set_instruction(stages[injected], f"Change of plan: put the {obj} in {new} instead of {old}.")
            spec["perfect_trace"]["events"] = events
            return [{"type": "mission_update", "injected_at_stage": injected,
                     "relevant_at_stage": relevant}]
    raise ValueError(f"no stage in progress after stage {at} can take a mission update with lag {lag}")


def _updated_trace(spec: JSONDict, segment: list[int], obj: str, old: str,
                   new: str) -> list[JSONDict] | None:
    """The trace with ``obj`` placed in ``new`` instead of ``old`` in ``segment``, and the
    request's closing message saying so; None if the segment has no such place."""
    events = copy.deepcopy(spec["perfect_trace"]["events"])
    held, changed = None, False
    for i in segment:
        call = _call(events[i])
        if call is None:
            continue
        if call["name"] == "pick":
            held = call["arguments"].get("object")
        elif call["name"] == "place" and held == obj and call["arguments"].get("area") == old:
            call["arguments"] = {**call["arguments"], "area": new}
            changed = True
    if not changed:
        return None
    following = [i for i in range(segment[-1] + 1, len(events)) if events[i]["type"] == "message"]
    if following:
        events[following[0]]["content"] = "Done, with the change of plan."
    return events


def apply(condition: str, spec: JSONDict, options: JSONDict
          ) -> tuple[JSONDict, list[JSONDict]]:
    """The ``condition`` transform of a clean sorting task spec (see the module docstring)."""
    return apply_condition(condition, spec, options, execution_error=execution_error,
                           interruption=interruption, mission_update=mission_update)
