"""How the warehouse's tasks are perturbed for ``magma bench`` (sorting's condition kinds).

The transforms edit a frozen task spec (``magma.task/1``: a preset wrapped as a generated
task, or a ``WarehouseOrders`` task) and its reference trace. Action stages are ``Deliver``
stages; a stage "in progress" is a ``Deliver`` continuing its request (no instruction of
its own: the second half of a transfer or a swap). Every edited trace is checked with
:func:`~magma_scenarios.warehouse.plans.replay` (reach, one box per slot).

- ``execution_error``: the first arm to move in the first ``Deliver`` stage at or after
  ``at`` is jammed (``Jam``): its call fails, the trace calls ``clear_jam`` and tries again
  (one extra call, the failed one forgiven).
- ``interruption``: after the first ``Deliver`` stage at or after ``at`` followed by a stage
  in progress, the user interrupts: "move the <box no stage uses> to <empty slot of its
  side> first" when one fits, else a question about where a box just moved is (SAY_ONLY).
  The next stage then resumes ("Thanks. Now continue ...").
- ``mission_update``: at the first stage in progress after ``at`` (stage ``i``), the user
  sends the box of stage ``i + lag`` (in progress too) to another empty slot of the same
  side; that stage's goal and the trace follow.
- ``combined``: a mission update and a jam on the updated stage.

Options (from the suite spec): ``at``, ``lag``. A transform that does not apply raises
``ValueError`` (the suite compiler then skips that skeleton seed).
"""

from __future__ import annotations

import copy

from magma_core.json_types import JSONDict
from magma_core.serialization import encode_value
from magma_scenarios.common.spec_edits import apply_condition
from magma_scenarios.common.spec_edits import insert_stage as _insert_stage
from magma_scenarios.common.spec_edits import set_instruction as _set_instruction
from magma_scenarios.common.spec_edits import stage_args as _args
from magma_scenarios.warehouse.plans import Call, empty_slots, replay
from magma_scenarios.warehouse.stages import ANY_HANDOVER
from magma_scenarios.warehouse.tools import Jam
from magma_scenarios.warehouse.world import BOXES, side_of

DELIVER = "magma_scenarios.warehouse.stages:Deliver"
ANSWER_QUESTION = "magma_scenarios.common.stages:AnswerQuestion"
RESUME = "Thanks. Now continue with what you were doing."


# -- reading a spec ---------------------------------------------------------------------------


def _is_action(entry: JSONDict) -> bool:
    return entry["spec"]["type"] == DELIVER


def _in_progress(entry: JSONDict) -> bool:
    return _is_action(entry) and _args(entry)["instruction"] is None


def _stage_calls(entry: JSONDict) -> int:
    """The reference tool calls of one stage (a jammed call included)."""
    if not _is_action(entry):
        return 0
    args = _args(entry)
    return args["calls"] + args["extra_calls"] + len(args["errors"])


def _segments(spec: JSONDict) -> list[list[int]]:
    """For each stage, the indices of its trace events (tool calls and the user events
    before them)."""
    events = spec["perfect_trace"]["events"]
    out: list[list[int]] = []
    cursor = 0
    for entry in spec["stages"]:
        calls = _stage_calls(entry)
        indices: list[int] = []
        while calls > 0 and cursor < len(events):
            if events[cursor]["type"] == "tool_calls":
                calls -= len(events[cursor]["calls"])
            indices.append(cursor)
            cursor += 1
        if calls:
            raise ValueError("the reference trace does not fit the stages' tool calls")
        out.append(indices)
    return out


def _calls(events: list[JSONDict]) -> list[Call]:
    return [(c["target_robot_name"], c["name"], c["arguments"])
            for e in events if e["type"] == "tool_calls" for c in e["calls"]]


def _valid(events: list[JSONDict]) -> bool:
    try:
        replay(_calls(events))
    except ValueError:
        return False
    return True


def _decision(*calls: Call) -> JSONDict:
    return {"type": "tool_calls", "calls": [{"name": tool, "arguments": dict(args),
                                            "target_robot_name": robot} for robot, tool, args in calls]}


def _used_boxes(spec: JSONDict) -> set[str]:
    used = {b for _, tool, args in _calls(spec["perfect_trace"]["events"]) if tool == "pick"
            for b in [args.get("object")]}
    for entry in spec["stages"]:
        if _is_action(entry):
            used |= set(_args(entry)["placements"])
    return used


# -- editing a spec ---------------------------------------------------------------------------
def _entry(stage_type: str, arguments: JSONDict) -> JSONDict:
    return {"request_type": None, "spec": {"type": stage_type, "arguments": arguments},
            "flag_answer_to_user": False, "reset_at_end": False}


def _deliver(placements: dict[str, str], instruction: str | None, calls: int) -> JSONDict:
    return {"placements": placements, "instruction": instruction, "calls": calls, "deadline": None,
            "flag_answer_to_user": False, "errors": [], "extra_calls": 0}


# -- the conditions ---------------------------------------------------------------------------
def execution_error(spec: JSONDict, at: int) -> list[JSONDict]:
    """Jam the first arm to move in the first ``Deliver`` stage from ``at`` (see the module)."""
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    for index in range(at, len(spec["stages"])):
        entry = spec["stages"][index]
        decisions = [i for i in segments[index] if events[i]["type"] == "tool_calls"]
        if not _is_action(entry) or not decisions or _args(entry)["errors"]:
            continue
        first = events[decisions[0]]["calls"][0]
        robot = first["target_robot_name"]
        _args(entry)["errors"] = [encode_value(Jam(robot))]
        _args(entry)["extra_calls"] += 1
        retry = (robot, first["name"], first["arguments"])
        events[decisions[0] + 1:decisions[0] + 1] = [_decision((robot, "clear_jam", {})), _decision(retry)]
        return [{"type": "execution_error", "injected_at_stage": index, "relevant_at_stage": index}]
    raise ValueError(f"no Deliver stage with a motion from stage {at}")


def interruption(spec: JSONDict, at: int) -> list[JSONDict]:
    """A direct order (or a question) after an action stage; the work then resumes."""
    stages = spec["stages"]
    index = next((i for i in range(at, len(stages) - 1)
                  if _is_action(stages[i]) and _in_progress(stages[i + 1])), None)
    if index is None:
        raise ValueError(f"no action stage from stage {at} is followed by work in progress")
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    position = segments[index][-1] + 1
    where = replay(_calls(events[:position]), finished=False)
    inserted: list[JSONDict] | None = None
    used = _used_boxes(spec)
    for box in (b for b in BOXES if b not in used and where.get(b) and side_of(where[b])):
        robot = side_of(where[box])
        for slot in empty_slots(where, robot):
            text = f"Wait, first move the {box} to {slot}."
            trial = [{"type": "user", "content": text},
                     _decision((robot, "pick", {"object": box})), _decision((robot, "place", {"slot": slot}))]
            if _valid(events[:position] + trial + events[position:]):
                entry, inserted = _entry(DELIVER, _deliver({box: slot}, text, 2)), trial
                break
        if inserted is not None:
            break
    if inserted is None:
        box = next(iter(_args(stages[index])["placements"]))
        fact = f"the {box} is in {where.get(box) or 'a gripper'}"
        question = f"Wait, a quick question: where is the {box} now?"
        entry = _entry(ANSWER_QUESTION, {"question": question, "rule": f"The answer says that {fact}.",
                                         "say_only": True})
        inserted = [{"type": "user", "content": question},
                    {"type": "message", "content": fact[0].upper() + fact[1:] + "."}]
    _insert_stage(spec, index + 1, entry)
    _set_instruction(stages[index + 2], RESUME)
    events[position:position] = inserted
    return [{"type": "interruption", "injected_at_stage": index + 1, "relevant_at_stage": index + 1}]


def mission_update(spec: JSONDict, at: int, lag: int) -> list[JSONDict]:
    """At the first stage in progress after ``at``, the box of the stage ``lag`` stages
    later goes to another empty slot of its side (see the module docstring)."""
    stages = spec["stages"]
    segments = _segments(spec)
    for injected in range(at + 1, len(stages) - lag):
        relevant = injected + lag
        if not all(_in_progress(stages[i]) for i in range(injected, relevant + 1)):
            continue
        placements = _args(stages[relevant])["placements"]
        for box, old in placements.items():
            if old == ANY_HANDOVER:
                continue
            places = [i for i in segments[relevant] for c in spec["perfect_trace"]["events"][i].get("calls", [])
                      if c["name"] == "place" and c["arguments"].get("slot") == old]
            if not places:
                continue
            start = segments[relevant][0]
            where = replay(_calls(spec["perfect_trace"]["events"][:start]), finished=False)
            later = [_args(s)["placements"].get(box) for s in stages[relevant + 1:] if _is_action(s)]
            for new in empty_slots(where, side_of(old)):
                if new == old or new in later:
                    continue
                events = _updated_trace(spec, places[0], old, new, segments[relevant][-1])
                if not _valid(events):
                    continue
                _args(stages[relevant])["placements"] = {**placements, box: new}
                _set_instruction(stages[injected], f"Change of plan: put the {box} in {new} instead of {old}.")
                spec["perfect_trace"]["events"] = events
                return [{"type": "mission_update", "injected_at_stage": injected,
                         "relevant_at_stage": relevant}]
    raise ValueError(f"no stage in progress after stage {at} can take a mission update with lag {lag}")


def _updated_trace(spec: JSONDict, event: int, old: str, new: str, last: int) -> list[JSONDict]:
    """The trace with the place into ``old`` at ``event`` going to ``new``, and the request's
    closing message saying so."""
    events = copy.deepcopy(spec["perfect_trace"]["events"])
    for call in events[event]["calls"]:
        if call["name"] == "place" and call["arguments"].get("slot") == old:
            call["arguments"] = {**call["arguments"], "slot": new}
    following = [i for i in range(last + 1, len(events)) if events[i]["type"] == "message"]
    if following:
        events[following[0]]["content"] = "Done, with the change of plan."
    return events


def apply(condition: str, spec: JSONDict, options: JSONDict
          ) -> tuple[JSONDict, list[JSONDict]]:
    """The ``condition`` transform of a clean warehouse task spec (see the module docstring)."""
    return apply_condition(condition, spec, options, execution_error=execution_error,
                           interruption=interruption, mission_update=mission_update)
