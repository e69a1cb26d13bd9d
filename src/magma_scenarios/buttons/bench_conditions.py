"""How the buttons scenario's tasks are perturbed for ``magma bench`` (sorting's condition kinds).

The transforms edit a frozen task spec (``magma.task/1``, e.g. a ``PanelTasks`` task) and its
reference trace. Action stages are ``ButtonsStage``s; a stage "in progress" continues its
request (no instruction: the rest of a press sequence).

- ``execution_error``: the first press of the first action stage at or after ``at`` meets a
  stuck button (``StuckButton``); the reference trace presses again (forgiven).
- ``interruption``: after the first action stage at or after ``at`` that is followed by a
  stage in progress, the user asks which lights are on (SAY_ONLY); the next stage resumes.
  (An extra press would shift every later press count, so the interruption is a question.)
- ``mission_update``: at the first stage in progress after ``at`` (stage ``i``), the last
  button of the sequence of stage ``i + lag`` changes to an allowed button not in it; only
  when no later stage depends on the lights (a light setting would then need other presses).
- ``combined``: a mission update and a stuck button on the updated stage.

Options (from the suite spec): ``at``, ``lag``. A transform that does not apply raises
``ValueError`` (the suite compiler then skips that skeleton seed).
"""

from __future__ import annotations

import copy

from magma_core.json_types import JSONDict
from magma_core.serialization import encode_value
from magma_scenarios.buttons.tools import StuckButton
from magma_scenarios.buttons.world import BUTTONS
from magma_scenarios.common.spec_edits import apply_condition
from magma_scenarios.common.spec_edits import insert_stage as _insert_stage
from magma_scenarios.common.spec_edits import set_instruction as _set_instruction
from magma_scenarios.common.spec_edits import stage_args as _args

STAGE = "magma_scenarios.buttons.stages:ButtonsStage"
IN_ORDER = "magma_scenarios.buttons.stages:PressedInOrder"
NEVER = "magma_scenarios.buttons.stages:NeverPressed"
ANSWER_QUESTION = "magma_scenarios.common.stages:AnswerQuestion"
RESUME = "Thanks. Now continue with what you were doing."


def _is_action(entry: JSONDict) -> bool:
    return entry["spec"]["type"] == STAGE


def _in_progress(entry: JSONDict) -> bool:
    return _is_action(entry) and _args(entry)["instruction"] is None


def _goals(entry: JSONDict) -> list[JSONDict]:
    return [g["spec"] for g in _args(entry)["goals"]]


def _segments(spec: JSONDict) -> list[list[int]]:
    """For each stage, the indices of its presses (and the user events before them)."""
    events = spec["perfect_trace"]["events"]
    out, cursor = [], 0
    for entry in spec["stages"]:
        calls = (_args(entry)["presses"] + len(_args(entry)["errors"])) if _is_action(entry) else 0
        indices: list[int] = []
        while calls > 0 and cursor < len(events):
            if events[cursor]["type"] == "tool_calls":
                calls -= len(events[cursor]["calls"])
            indices.append(cursor)
            cursor += 1
        if calls:
            raise ValueError("the reference trace does not fit the stages' presses")
        out.append(indices)
    return out


def _lights(events: list[JSONDict]) -> list[str]:
    """The lights on after ``events`` (every press toggles one)."""
    on = {b: False for b in BUTTONS}
    for event in events:
        for call in event.get("calls", []) if event["type"] == "tool_calls" else []:
            on[call["arguments"]["button"]] = not on[call["arguments"]["button"]]
    return [b for b in BUTTONS if on[b]]


def execution_error(spec: JSONDict, at: int) -> list[JSONDict]:
    """A stuck button on the first press of the first action stage from ``at``."""
    segments = _segments(spec)
    events = spec["perfect_trace"]["events"]
    for index in range(at, len(spec["stages"])):
        entry = spec["stages"][index]
        presses = [i for i in segments[index] if events[i]["type"] == "tool_calls"]
        if not _is_action(entry) or not presses or _args(entry)["errors"]:
            continue
        _args(entry)["errors"] = [encode_value(StuckButton())]
        events.insert(presses[0], copy.deepcopy(events[presses[0]]))
        return [{"type": "execution_error", "injected_at_stage": index, "relevant_at_stage": index}]
    raise ValueError(f"no action stage with a press from stage {at}")


def interruption(spec: JSONDict, at: int) -> list[JSONDict]:
    """A question about the lights between an action stage and the work it continues."""
    stages = spec["stages"]
    index = next((i for i in range(at, len(stages) - 1)
                  if _is_action(stages[i]) and _in_progress(stages[i + 1])), None)
    if index is None:
        raise ValueError(f"no action stage from stage {at} is followed by work in progress")
    events = spec["perfect_trace"]["events"]
    position = _segments(spec)[index][-1] + 1
    on = _lights(events[:position])
    fact = f"the lights on are {', '.join(on)}" if on else "no light is on"
    question = "Wait, a quick question: which lights are on now?"
    entry = {"request_type": None, "flag_answer_to_user": False, "reset_at_end": False,
             "spec": {"type": ANSWER_QUESTION, "arguments": {
                 "question": question, "rule": f"The answer says that {fact}.", "say_only": True}}}
    _insert_stage(spec, index + 1, entry)
    _set_instruction(stages[index + 2], RESUME)
    events[position:position] = [{"type": "user", "content": question},
                                 {"type": "message", "content": fact[0].upper() + fact[1:] + "."}]
    return [{"type": "interruption", "injected_at_stage": index + 1, "relevant_at_stage": index + 1}]


def mission_update(spec: JSONDict, at: int, lag: int) -> list[JSONDict]:
    """Change the last button of an in-progress press sequence (see the module docstring)."""
    stages = spec["stages"]
    segments = _segments(spec)
    forbidden = {g["arguments"]["button"] for s in stages if _is_action(s) for g in _goals(s)
                 if g["type"] == NEVER}
    events = spec["perfect_trace"]["events"]
    for injected in range(at + 1, len(stages) - lag):
        relevant = injected + lag
        if not all(_in_progress(stages[i]) for i in range(injected, relevant + 1)):
            continue
        later = [g["type"] for s in stages[relevant + 1:] if _is_action(s) for g in _goals(s)]
        if any(t not in (IN_ORDER, NEVER) for t in later):
            continue
        order = next((g for g in _goals(stages[relevant]) if g["type"] == IN_ORDER), None)
        presses = [i for i in segments[relevant] if events[i]["type"] == "tool_calls"]
        if order is None or not presses:
            continue
        sequence = order["arguments"]["sequence"]
        old = sequence[-1]
        new = next((b for b in BUTTONS if b not in sequence and b not in forbidden), None)
        if new is None or events[presses[-1]]["calls"][0]["arguments"]["button"] != old:
            continue
        order["arguments"]["sequence"] = [*sequence[:-1], new]
        events[presses[-1]]["calls"][0]["arguments"] = {"button": new}
        following = [i for i in range(presses[-1] + 1, len(events)) if events[i]["type"] == "message"]
        if following:
            events[following[0]]["content"] = "Done, with the change of plan."
        _set_instruction(stages[injected], f"Change of plan: press the {new} button instead of the {old} one.")
        return [{"type": "mission_update", "injected_at_stage": injected, "relevant_at_stage": relevant}]
    raise ValueError(f"no stage in progress after stage {at} can take a mission update with lag {lag}")


def apply(condition: str, spec: JSONDict, options: JSONDict
          ) -> tuple[JSONDict, list[JSONDict]]:
    """The ``condition`` transform of a clean buttons task spec (see the module docstring)."""
    return apply_condition(condition, spec, options, execution_error=execution_error,
                           interruption=interruption, mission_update=mission_update)
