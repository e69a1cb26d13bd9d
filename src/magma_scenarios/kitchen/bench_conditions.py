"""How the kitchen scenario's tasks are perturbed for ``magma bench`` (the same condition
kinds as sorting's, see :mod:`magma_scenarios.sorting.bench_conditions`).

The transforms edit a frozen task spec (``magma.task/1``) and its reference trace. Action
stages are ``KitchenStage``; a stage "in progress" is one continuing its request (no
instruction of its own).

- ``execution_error``: the first grasp of the first action stage at or after ``at`` slips
  (``GraspSlip``); the reference trace grasps again.
- ``interruption``: after the first action stage at or after ``at`` followed by a stage in
  progress, the user asks where the object just moved is (SAY_ONLY); the next stage then
  resumes the work ("Thanks. Now continue ...").
- ``mission_update``: at the first stage in progress after ``at`` (stage ``i``), the user
  sends the object of stage ``i + lag`` (in progress too) to another always-open place
  (``counter`` or ``bowl_a``) instead; only a stage whose reference calls are just a pick
  and a place qualifies, the new place is never one a rule keeps that object out of, and
  no container ever holds more than it takes.
- ``combined``: a mission update and a grasp error on the updated stage.

A transform that does not apply raises ``ValueError`` (the suite compiler then skips that
skeleton seed).
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
from magma_scenarios.kitchen import world as w
from magma_scenarios.kitchen.tools import GraspSlip

KITCHEN_STAGE = "magma_scenarios.kitchen.stages:KitchenStage"
LOOK_INSIDE = "magma_scenarios.kitchen.questions:LookInside"
ANSWER_QUESTION = "magma_scenarios.common.stages:AnswerQuestion"
MOVE_TO_COUNTER = "magma_scenarios.kitchen.stages:MoveToCounterAtEntry"
RESUME = "Thanks. Now continue with what you were doing."
OPEN_PLACES = ("counter", "bowl_a")


def _is_action(entry: JSONDict) -> bool:
    return _type(entry) == KITCHEN_STAGE


def _in_progress(entry: JSONDict) -> bool:
    return _is_action(entry) and _args(entry)["instruction"] is None


def _calls(entry: JSONDict) -> int:
    if _is_action(entry):
        return _args(entry)["calls"] + len(_args(entry)["errors"])
    if _type(entry) == LOOK_INSIDE:
        return _args(entry)["calls"]
    return 0


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


def _names(spec: JSONDict, segment: list[int]) -> list[str]:
    events = spec["perfect_trace"]["events"]
    return [c["name"] for i in segment if (c := _call(events[i]))]


def _moved_objects(spec: JSONDict, segment: list[int]) -> list[str]:
    events = spec["perfect_trace"]["events"]
    return [c["arguments"]["object"] for i in segment if (c := _call(events[i])) and c["name"] == "pick"]


def _start() -> dict[str, str]:
    return {o: ("counter" if isinstance(v, int) else v) for o, v in w.START.items()}


def _moves(spec: JSONDict, events: list[JSONDict]) -> Iterator[tuple[str, str]]:
    """(object, place) for every move along the trace, entry transitions included (as far
    as they can be told from the trace: a ``MoveToCounterAtEntry`` is taken before the
    stage's first pick)."""
    pending = [_args(e)["entry_transition"] for e in spec["stages"] if _is_action(e)
               and isinstance(_args(e).get("entry_transition"), dict)
               and _args(e)["entry_transition"].get("type") == MOVE_TO_COUNTER]
    for transition in pending:
        yield transition["arguments"]["object"], "counter"
    held = None
    for event in events:
        call = _call(event)
        if call is None:
            continue
        if call["name"] == "pick":
            held = call["arguments"].get("object")
        elif call["name"] == "place" and held is not None:
            yield held, call["arguments"].get("location")
            held = None


def _fits(spec: JSONDict, events: list[JSONDict]) -> bool:
    """No container ever holds more than it takes, and every move goes somewhere else."""
    where = _start()
    for obj, place in _moves(spec, events):
        if where.get(obj) == place:
            return False
        where[obj] = place
        load = sum(1 for p in where.values() if p == place)
        limit = len(w.COUNTER_SPOTS) if place == "counter" else w.CAPACITY
        if load > limit:
            return False
    return True


def _kept_out(spec: JSONDict) -> dict[str, set[str]]:
    """Container → kinds a rule of the task keeps out of it."""
    out: dict[str, set[str]] = {}
    for r in spec["requests"]:
        if r["request_type"] == "KeepOut":
            out.setdefault(r["parameters"]["container"], set()).add(r["parameters"]["kind"])
    return out


def _entry(stage_type: str, arguments: JSONDict) -> JSONDict:
    return {"request_type": None, "spec": {"type": stage_type, "arguments": arguments},
            "flag_answer_to_user": False, "reset_at_end": False}


def execution_error(spec: JSONDict, at: int) -> list[JSONDict]:
    """A grasp slip in the first action stage with a pick from ``at``; the trace grasps twice."""
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    for index in range(at, len(spec["stages"])):
        entry = spec["stages"][index]
        picks = [i for i in segments[index] if (c := _call(events[i])) and c["name"] == "pick"]
        if not _is_action(entry) or not picks:
            continue
        _args(entry)["errors"] = _args(entry)["errors"] + [encode_value(GraspSlip())]
        events.insert(picks[0], copy.deepcopy(events[picks[0]]))
        return [{"type": "execution_error", "injected_at_stage": index, "relevant_at_stage": index}]
    raise ValueError(f"no action stage with a grasp from stage {at}")


def interruption(spec: JSONDict, at: int) -> list[JSONDict]:
    """A question after an action stage followed by work in progress; the work then resumes."""
    stages = spec["stages"]
    index = next((i for i in range(at, len(stages) - 1)
                  if _is_action(stages[i]) and _in_progress(stages[i + 1])
                  and _moved_objects(spec, _segments(spec)[i])), None)
    if index is None:
        raise ValueError(f"no action stage from stage {at} is followed by work in progress")
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    position = segments[index][-1] + 1
    obj = _moved_objects(spec, segments[index])[-1]
    where = dict(_moves(spec, events[:position])).get(obj, "counter")
    fact = f"the {obj} is on the counter" if where == "counter" else f"the {obj} is in {where}"
    question = f"Wait, a quick question: where is the {obj} now?"
    entry = _entry(ANSWER_QUESTION, {"question": question, "rule": f"The answer says that {fact}.",
                                     "say_only": True})
    _insert_stage(spec, index + 1, entry)
    _set_instruction(stages[index + 2], RESUME)
    events[position:position] = [{"type": "user", "content": question},
                                 {"type": "message", "content": fact[0].upper() + fact[1:] + "."}]
    return [{"type": "interruption", "injected_at_stage": index + 1, "relevant_at_stage": index + 1}]


def mission_update(spec: JSONDict, at: int, lag: int) -> list[JSONDict]:
    """At the first stage in progress after ``at``, the object of the stage ``lag`` later
    goes to another always-open place (see the module docstring)."""
    stages = spec["stages"]
    segments = _segments(spec)
    kept_out = _kept_out(spec)
    for injected in range(at + 1, len(stages) - lag):
        relevant = injected + lag
        if not all(_in_progress(stages[i]) for i in range(injected, relevant + 1)):
            continue
        if _names(spec, segments[relevant]) != ["pick", "place"]:
            continue
        target = _args(stages[relevant])
        (obj, old), = target["placements"].items()
        if old not in OPEN_PLACES:
            continue
        for new in OPEN_PLACES:
            if new == old or w.kind_of(obj) in kept_out.get(new, set()):
                continue
            events = copy.deepcopy(spec["perfect_trace"]["events"])
            place_event = _call(events[segments[relevant][-1]])
            place_event["arguments"] = {**place_event["arguments"], "location": new}
            if not _fits(spec, events):
                continue
            following = [i for i in range(segments[relevant][-1] + 1, len(events))
                         if events[i]["type"] == "message"]
            if following:
                events[following[0]]["content"] = "Done, with the change of plan."
            target["placements"] = {obj: new}
            where = "on the counter" if new == "counter" else f"in {new}"
            _set_instruction(stages[injected], f"Change of plan: put the {obj} {where} instead.")
            spec["perfect_trace"]["events"] = events
            return [{"type": "mission_update", "injected_at_stage": injected,
                     "relevant_at_stage": relevant}]
    raise ValueError(f"no stage in progress after stage {at} can take a mission update with lag {lag}")


def apply(condition: str, spec: JSONDict, options: JSONDict
          ) -> tuple[JSONDict, list[JSONDict]]:
    """The ``condition`` transform of a clean kitchen task spec (see the module docstring)."""
    return apply_condition(condition, spec, options, execution_error=execution_error,
                           interruption=interruption, mission_update=mission_update)
