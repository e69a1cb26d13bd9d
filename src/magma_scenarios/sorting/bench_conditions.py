"""How the sorting scenario's tasks are perturbed for ``magma bench`` (tasks made of
``ObjectsToZones`` stages, one robot).

- ``execution_error``: the stage's first grasp slips (``GraspSlip`` in its error
  parameters); the reference trace grasps again.
- ``interruption``: after action stage ``at`` (default 0) the user asks for an unused cube to
  go to a zone first; the next stage then resumes the work ("Thanks. Now continue ...").
- ``mission_update``: at the start of stage ``at + 1`` the user changes the zone of the cube
  of stage ``at + 1 + lag`` (default lag 0); that stage's goal and the trace follow.
- ``combined``: a mission update and a grasp error on the updated stage.

Options (from the suite spec): ``at``, ``lag``.
"""

from __future__ import annotations

from typing import Any

from magma_core.serialization import encode_value
from magma_scenarios.sorting.tools import GraspSlip

STAGE_TYPE = "magma_scenarios.common.stages:ObjectsToZones"
RESUME = "Thanks. Now continue with what you were doing."


def _check(spec: dict[str, Any]) -> None:
    for index, stage in enumerate(spec["stages"]):
        if stage["type"] != STAGE_TYPE:
            raise ValueError(f"stage {index} is not an ObjectsToZones stage")


def _segments(spec: dict[str, Any]) -> list[list[int]]:
    """For each stage, the indices of its reference-trace events (user + tool-call events)."""
    events = spec["perfect_trace"]["events"]
    out: list[list[int]] = []
    cursor = 0
    for stage in spec["stages"]:
        args = stage["arguments"]
        calls = 2 * args["moves"] + args["extra_calls"] + len(args["errors"])
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


def _move(obj: str, zone: str) -> list[dict[str, Any]]:
    return [
        {"type": "tool_calls", "calls": [{"name": "pick", "arguments": {"object": obj},
                                          "target_robot_name": None}]},
        {"type": "tool_calls", "calls": [{"name": "place", "arguments": {"area": zone},
                                          "target_robot_name": None}]},
    ]


def _set_instruction(stage: dict[str, Any], text: str) -> None:
    old = stage["arguments"]["instruction"]
    stage["arguments"]["instruction"] = text if old is None else f"{text} {old}"


def _stage(placements: dict[str, str], instruction: str, answer: bool = False) -> dict[str, Any]:
    return {"type": STAGE_TYPE, "arguments": {
        "placements": placements, "instruction": instruction, "flag_answer_to_user": answer,
        "reset_at_end": False, "entry_transition": None, "errors": [], "extra_calls": 0,
        "moves": None, "additive": False}}


def execution_error(spec: dict[str, Any], at: int) -> list[dict[str, Any]]:
    """Inject a grasp slip in stage ``at``; the trace grasps twice."""
    segments = _segments(spec)
    stage = spec["stages"][at]["arguments"]
    events = spec["perfect_trace"]["events"]
    picks = [i for i in segments[at] if events[i]["type"] == "tool_calls"
             and events[i]["calls"][0]["name"] == "pick"]
    if not picks:
        raise ValueError(f"stage {at} has no grasp to fail")
    stage["errors"] = stage["errors"] + [encode_value(GraspSlip())]
    events.insert(picks[0], dict(events[picks[0]]))
    return [{"type": "execution_error", "injected_at_stage": at, "relevant_at_stage": at}]


def interruption(spec: dict[str, Any], at: int) -> list[dict[str, Any]]:
    """A direct instruction after action stage ``at``; the work resumes after it."""
    segments = _segments(spec)
    attributes = spec["situation"]["attributes"]
    used = {obj for s in spec["stages"] for obj in s["arguments"]["placements"]}
    free = [obj for obj in attributes["objects"] if obj not in used]
    if not free:
        raise ValueError("every object is already part of the task")
    after = spec["stages"][at + 1]["arguments"]["placements"] if at + 1 < len(spec["stages"]) else {}
    zone = next(z for z in attributes["areas"] if z not in after.values())
    stages = spec["stages"]
    last = at + 1 == len(stages)
    new = _stage({free[0]: zone}, f"Wait, first put the {free[0]} in {zone}.", answer=last)
    if last:
        stages[at]["arguments"]["flag_answer_to_user"] = False
    else:
        _set_instruction(stages[at + 1], RESUME)
    stages.insert(at + 1, new)
    events = spec["perfect_trace"]["events"]
    position = segments[at][-1] + 1
    events[position:position] = [{"type": "user", "content": new["arguments"]["instruction"]},
                                 *_move(free[0], zone)]
    return [{"type": "interruption", "injected_at_stage": at + 1, "relevant_at_stage": at + 1}]


def mission_update(spec: dict[str, Any], at: int, lag: int) -> list[dict[str, Any]]:
    """At stage ``at + 1`` the user moves the target of stage ``at + 1 + lag`` to another zone."""
    injected, relevant = at + 1, at + 1 + lag
    if relevant >= len(spec["stages"]):
        raise ValueError(f"needs at least {relevant + 1} stages")
    segments = _segments(spec)
    target = spec["stages"][relevant]["arguments"]
    obj, old = next(iter(target["placements"].items()))
    areas = spec["situation"]["attributes"]["areas"]
    new = next(z for z in areas if z != old)
    target["placements"] = {**target["placements"], obj: new}
    _set_instruction(spec["stages"][injected],
                     f"Change of plan: put the {obj} in {new} instead of {old}.")
    events = spec["perfect_trace"]["events"]
    for i in segments[relevant]:
        call = events[i]["calls"][0] if events[i]["type"] == "tool_calls" else None
        if call and call["name"] == "place" and call["arguments"].get("area") == old:
            call["arguments"] = {**call["arguments"], "area": new}
    for event in events:
        if event["type"] == "message":
            event["content"] = "Done, with the change of plan."
    return [{"type": "mission_update", "injected_at_stage": injected, "relevant_at_stage": relevant}]


def apply(condition: str, spec: dict[str, Any], options: dict[str, Any]
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``condition`` transform of a clean sorting task spec (see the module docstring)."""
    _check(spec)
    for stage in spec["stages"]:  # make every stage's call budget explicit before editing
        args = stage["arguments"]
        args["moves"] = len(args["placements"]) if args["moves"] is None else args["moves"]
    at, lag = int(options.get("at", 0)), int(options.get("lag", 0))
    if condition == "execution_error":
        return spec, execution_error(spec, at)
    if condition == "interruption":
        return spec, interruption(spec, at)
    if condition == "mission_update":
        return spec, mission_update(spec, at, lag)
    if condition == "combined":
        updates = mission_update(spec, at, lag)
        errors = execution_error(spec, updates[0]["relevant_at_stage"])
        return spec, updates + errors
    raise ValueError(f"unknown condition {condition!r}")
